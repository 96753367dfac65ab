"""Bad input: one line naming the file (and the line where known), exit status 2."""


class InputError(Exception):
    """A run directory (or the output path) that cannot be used as it is."""

    def __init__(self, path, line, message):
        super().__init__(message)
        self.path = path
        self.line = line
        self.message = message

    def __str__(self):
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message}"
