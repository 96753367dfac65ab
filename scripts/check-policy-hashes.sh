#!/usr/bin/env bash
# Byte-identity check of the cluster scheduler: runs every policy (FIFO, SRTF, LAS, FTF) with
# every practical mechanism (proportional, GREEDY, TUNE), shortened and in full (the policy figure
# of docs/synergy.md), a few variants (multi-GPU jobs, a short starvation bound, FTF in Synergy's
# order, TUNE sorted by demand, deep queues without the starvation guard), the default experiment
# and, when data/philly.csv exists, the Philly replay; compares the sha256 of each run's
# jobs.csv and rounds.csv with the table below. A change to the scheduler's data structures must
# leave every line as it is; a change meant to alter scheduling results updates the table
# (--record prints it) and says why in its commit.
#
# Usage: scripts/check-policy-hashes.sh [--record] [NAME_FILTER]
#   --record     print the table with the hashes of this build instead of checking
#   NAME_FILTER  only the cells whose name contains it (grep -E pattern)
# Environment: BUILD (default build/), TROUPE (the binary; default $BUILD/apps/troupe),
# TIMEOUT (seconds per run, default 300).
# Exit status: 0 all equal, 1 some differ or a run failed, 2 bad usage.
# Each short cell measures jobs 1000-1199 instead of 4000-4999 so that it takes seconds; the cells
# whose queue grows without bound under that draw stop at a deadline.
set -uo pipefail

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
TIMEOUT=${TIMEOUT:-300}
record=0
filter=""
for arg in "$@"; do
  case "$arg" in
    --record) record=1 ;;
    -*) echo "check-policy-hashes.sh: unknown option $arg" >&2; exit 2 ;;
    *) filter=$arg ;;
  esac
done
troupe=${TROUPE:-$BUILD/apps/troupe}
if [ ! -x "$troupe" ]; then
  echo "check-policy-hashes.sh: $troupe not built" >&2
  exit 2
fi

SHORT="run.measure_first_job=1000 run.measure_last_job=1199"
MG="workload.generator.multi_gpu=true"
# name | config | --set fields (space-separated) | jobs.csv sha256 | rounds.csv sha256
read -r -d '' TABLE <<'EOF'
fifo-proportional|default|SHORT scheduler.policy=fifo scheduler.mechanism=proportional|3e5ddeda7ec3ce6922b5bdf8981b22f2570e0697adce77135fb2b4e1c9b4fbd0|3fbb7f2feb383caeebda0046848bf69cf441c8c8b805f3ac087d2e110aa7d562
fifo-greedy|default|SHORT scheduler.policy=fifo scheduler.mechanism=greedy|3dfbed8015250519fc528292cd67717d67c46c0fd3d76e4d4790a572a7250ede|cd231e518aa211aa968220de4a477fad65c4fc518d9b62272441ec564a1d5159
fifo-tune|default|SHORT scheduler.policy=fifo scheduler.mechanism=tune|a035352fedd2c5beae7c5b8e539612aac9bb0d490e8e8e43509c662799b64f9d|a82bb7e2bcc4e2361e6a0683cfd6e8ce6b8685860e2b7532b5489931aa4076a9
srtf-proportional|default|SHORT scheduler.policy=srtf scheduler.mechanism=proportional|d6a788b4eb0a42e7706be4b680277666e5fff5719198b5cfb1df825f74adfffa|6b417e2e71998f33e6d0836e2b6a073594c3123e79bd0758744b46551cac47f8
srtf-greedy|default|SHORT scheduler.policy=srtf scheduler.mechanism=greedy|c8dd6c67b471a0489e545db1c14dc4bd648ee11572d35a5d043c5479d062a9de|a5bda25858eb4ee79a162de647f56c70d8d95cc8cded5a92d81d8c8d7c1f9006
srtf-tune|default|SHORT scheduler.policy=srtf scheduler.mechanism=tune|e17485d93f3ec141f72662cbe6d2941641e81a97938cdb696e21166fd3afa098|d5c8d6ea0989921f067220076bba4f856b87aa7fcf0821134cb02aea76095ce3
las-proportional|default|SHORT scheduler.policy=las scheduler.mechanism=proportional|8bfca0517eb122fa969613af12a62287f9dc7bcedcc44854e959665416d5f95a|84202da9521c72fc828d744ee59abfa2d1e951b9c27dd618fe2a722f936d6b2e
las-greedy|default|SHORT scheduler.policy=las scheduler.mechanism=greedy|039488d00f839214076ff1a503baaa01d4846c86f11119dfbfd51d8767ddfacb|c4f9f1d6b08fad2627d20b5d05f4b0ea51427b67e452815bc5f499b1612441ae
las-tune|default|SHORT scheduler.policy=las scheduler.mechanism=tune|37d20be4df6cd604222cf2bdd472430a6b6bd2337184e1b979f0a4fe630f571d|5c0ce59a821222b2fc539f7c8ef4738bcf1d1600ff23b451c0cea9d3f7c42248
ftf-proportional|default|SHORT scheduler.policy=ftf scheduler.mechanism=proportional|a3c615734ee3bd7ae2bfd2cb3336bb45a01cb0dab2fb0201b4f422458cd617fb|8a0e7f27cdd925db8e0f392bfba7b6a15289f19db0a276c8b7bd91348df28653
ftf-greedy|default|SHORT scheduler.policy=ftf scheduler.mechanism=greedy|a77e94380e7f5c4dedf5263973c38598203579bbef2ba8b6253ff84a5120a366|fff6df2b4166b1b1b1904cb72bd0a1b92c0b9bdfb12872e248d5a6d8c2f763a2
ftf-tune|default|SHORT scheduler.policy=ftf scheduler.mechanism=tune|026700fcecb3721778574790f24d4164aabc499d680d03489745b2009402a99e|309b39ebc6cc2ff4f22381f07d84b05c36c6595b859678fd4468235876e89e30
multi-fifo-tune|default|SHORT MG scheduler.policy=fifo scheduler.mechanism=tune|e9c5c87a95536bf6e232d6d2558a2a22594f61103cb6586ed4250c6c655a4a0a|ba18eef9ce8e38b7c2b904ab2c93da2abe2a2366bb865aa19aa63c0ca5184359
multi-srtf-tune|default|SHORT MG scheduler.policy=srtf scheduler.mechanism=tune|4c9ea25d2e2ec31230a7531f268699006af91711a1277dfbd37e53ed60e2a65d|150264497133358344fe652551b0dddfd317cc770ab3548aec2deec3713297b1
multi-las-tune|default|SHORT MG scheduler.policy=las scheduler.mechanism=tune|3c37f167af5e2e0f46804d0cb63cf80b17b2501334ae307403f9c13e862ba498|0e1b54014f42cae0bd5f8e4e306431e6a7fdf570e466102d37897447cb3ba04e
multi-ftf-tune|default|SHORT MG scheduler.policy=ftf scheduler.mechanism=tune|1494e4f6020476b988c5bf0046f2d701a4a124326a9fd0dcbb9be379f790fd80|988a43682bcc9d3b61a21e9bd25385cfb77f971da13e90f065726e96015e7112
multi-las-proportional|default|SHORT MG scheduler.policy=las run.deadline_s=8000000|551670767d69081b4439c95f37c0062e1ba7e863e10760a53beb3244809e3225|4a186f9a8017243f19b0f29e32f18ebbf3a2711653dd020adc64d399098e7f10
no-guard-las-tune|default|scheduler.policy=las scheduler.mechanism=tune scheduler.starvation_s=0 run.deadline_s=20000000|dd90101abff040a5a37f8165f3bd4c8a2178c19de451d69afbb845ba4e31b95c|fa53b5bc63d90737bc54e6da2e72a2b6fc976ef0d80b360dea8ceea8aafc7e58
multi-srtf-greedy|default|SHORT MG scheduler.policy=srtf scheduler.mechanism=greedy run.deadline_s=3000000|26ae68c28853dd975cab4a49f1d2c89ff05fe41b700daf98a4655d07d050f6e8|958aa017c583939dbcec4468f666d2e235d5e045d7115e85b94b736c7836c2fb
starve-srtf-tune|default|SHORT scheduler.starvation_s=100000 scheduler.policy=srtf scheduler.mechanism=tune|7868c131d1fdf2421b96982210353255e08303be9b440ea6546a2a9d26085d4e|4da672bacb5e369e3cf984d2960b3c92101bd4ebd44f115466796d1bd550c9ae
starve-las-tune|default|SHORT scheduler.starvation_s=100000 scheduler.policy=las scheduler.mechanism=tune|3c36e5c6bdb2f0e9acf67c4c56dd601f313be1863dff0fce1a9b55b2abbab5b2|c7cd1c00a26f302ed60ebcd8d9ea918bbfed97e5643e0eb13a1bb8b0d515b59f
starve-ftf-tune|default|SHORT scheduler.starvation_s=100000 scheduler.policy=ftf scheduler.mechanism=tune|baaf0a92236561a17bb4503c8ab96715d715eda361641afb62bee4e9311c7552|ff679566fe59ffd0336cba35df50565bcf61ab8b6d0a47e800c9df8c2f044547
ftf-synergy-tune|default|SHORT scheduler.policy=ftf scheduler.ftf_order=synergy scheduler.mechanism=tune|b654544fea0b62b85f41a59e6bfd1afee7ffcc652fc2d2ca95aeafe1a04657c3|7fb5de86b7ec321705eed0ed97003121caf8a0b2bf725d7d5f6fa4e17298cf57
ftf-synergy-proportional|default|SHORT scheduler.policy=ftf scheduler.ftf_order=synergy|7cc5917c8f7f343dc5f15a07d94aa14fcc54a4ddf72c0522fc947151bd8ef8f3|e5e61256c28312a9be9db972b97b1669dd360e3fb4a51e615deff7de5fcb989b
las-tune-by-demand|default|SHORT scheduler.policy=las scheduler.mechanism=tune scheduler.tune_sort_by_demand=true|9e2859611c367259bc51190dfe4ac136572a169483bc64794ab2cd4757d295de|e47edd86acdcc7624b0ca9bacba6fbed95c1570378ee29dfac04589eb57ae243
figure-srtf-proportional|default|scheduler.policy=srtf scheduler.mechanism=proportional|7e5c35c2e02f60d0cd390bf3692d9174d8c072d7cb09f56fbbb425120fe76852|588630c482e814f20c1adc7bf2019389df1272f11494951d3323ac3ea7ea04a7
figure-srtf-greedy|default|scheduler.policy=srtf scheduler.mechanism=greedy|08ef50c0a26c7630ee5c635ba32e35fcdb1e2e8e295bfa0a73144266872a199e|d8f7e83ee1012fe013f21507557f18d0ccf2f415fa307d7537410ef9dba4848f
figure-srtf-tune|default|scheduler.policy=srtf scheduler.mechanism=tune|77947e2c0233e5941764d7c7dea886f71c3e5dfba775d4b7f5c2653f4090f88f|916953357d15b6ba8fc053f97b8203f6e87237df3f9b716abd39b580a8e92146
figure-las-proportional|default|scheduler.policy=las scheduler.mechanism=proportional|9941bbd8526a4ca8112eb6fe0e0523c263eecdb7347de8b81e73dd78a1fe41e3|b9db44c55640f8515bbc587ead08335e90fff1e337f22fb1de6ed8f45e461dd4
figure-las-greedy|default|scheduler.policy=las scheduler.mechanism=greedy|fbb14247553f4bf080fcd3b27e66b863dcc1e3fbb83f466401d0c82146b70a69|ad34cb15bcf0e5203a0f23e9babf3623df3cddc9e5455452dac61feb91700214
figure-las-tune|default|scheduler.policy=las scheduler.mechanism=tune|cb7c9424f761429db0b7f0463177f3829aa5a8aad252c881470bc454142e606d|e3975f8035db0737d91efea898c442db08df1ab8105535b3c23b77e388a872dc
figure-ftf-proportional|default|scheduler.policy=ftf scheduler.mechanism=proportional|914c51c40a39e42c6d672a63557552aeec30bf5287325bba3eb2b387055c18a9|906e782c29088a0e3ef98dc8346052217d57397f34ce95336510f8e5bda96512
figure-ftf-greedy|default|scheduler.policy=ftf scheduler.mechanism=greedy|3adda2f138e6032238812d8024793e489cc67639d4abc22000a1afb0f1c7511d|2b7a3f109caaecf5e48c77f05d20742fe0631143bccc2e0685334d2cac1a6b65
figure-ftf-tune|default|scheduler.policy=ftf scheduler.mechanism=tune|65a17ad37828557fbd5c9e4751c0be934ddb4dcb4432a1fcba177d8190adc21f|4c17db5b00373592ea3d8c05f4b7e7b9886187d33bae143991c571c4f64b3c47
default|default||574c086da0870ef2c13bd46645eb06a7b3e52f282f8ae903950f6f99f06d0c41|55e684735cd81499607c5a409e0884f4662b2c2e1041709943ca140a71948997
philly|philly-512||e7e89f1abf0a148e8aa0e07902de437a705dbee18dba4654e93746cd07258283|f5e3b375a9f7bfee48a143bd2ced9202aadc0fdf35f2695826c7b3fc7bff07b4
EOF

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
while IFS='|' read -r name config sets want_jobs want_rounds; do
  [ -z "$name" ] && continue
  if [ -n "$filter" ] && ! grep -qE "$filter" <<<"$name"; then continue; fi
  if [ "$config" = philly-512 ] && [ ! -f data/philly.csv ]; then
    echo "skip  $name (no data/philly.csv)"
    continue
  fi
  args=()
  for s in ${sets//SHORT/$SHORT}; do
    [ "$s" = MG ] && s=$MG
    args+=(--set "$s")
  done
  out="$work/$name"
  if ! timeout "$TIMEOUT" "$troupe" run "configs/$config.textproto" --quiet --out "$out" \
      "${args[@]}" >"$work/log" 2>&1; then
    echo "FAIL  $name (run failed or timed out after ${TIMEOUT}s)"
    tail -3 "$work/log"
    failed=1
    continue
  fi
  jobs=$(sha256sum "$out/jobs.csv" | cut -d' ' -f1)
  rounds=$(sha256sum "$out/rounds.csv" | cut -d' ' -f1)
  if [ "$record" = 1 ]; then
    echo "$name|$config|$sets|$jobs|$rounds"
  elif [ "$jobs" = "$want_jobs" ] && [ "$rounds" = "$want_rounds" ]; then
    echo "ok    $name"
  else
    echo "DIFF  $name (jobs.csv ${jobs:0:12} want ${want_jobs:0:12}," \
      "rounds.csv ${rounds:0:12} want ${want_rounds:0:12})"
    failed=1
  fi
done <<<"$TABLE"
exit "$failed"
