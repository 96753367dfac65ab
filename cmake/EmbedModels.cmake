# Writes OUT, a C++ file defining the two catalogue CSVs of MODELS_DIR as string constants.
file(READ "${MODELS_DIR}/synergy_models.csv" MODELS)
file(READ "${MODELS_DIR}/synergy_sensitivity.csv" SENSITIVITY)
file(WRITE "${OUT}" "// Generated from configs/models by cmake/EmbedModels.cmake. Do not edit.\n"
  "namespace troupe::builtin {\n"
  "extern const char* const kModelsCsv;\nextern const char* const kSensitivityCsv;\n"
  "const char* const kModelsCsv = R\"csv(${MODELS})csv\";\n"
  "const char* const kSensitivityCsv = R\"csv(${SENSITIVITY})csv\";\n"
  "}  // namespace troupe::builtin\n")
