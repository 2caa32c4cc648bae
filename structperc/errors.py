"""Domain errors. The CLI prints them on one line and exits with status 2."""


class StructpercError(Exception):
    """Base class for every error a user can cause (bad input, bad options, bad model file)."""


class InputFormatError(StructpercError):
    """A corpus file is malformed; the message names file:line."""

    def __init__(self, path, line, message):
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")

    def __reduce__(self):  # pickled whole: a reader in another process raises it here
        return type(self), (self.path, self.line, self.message)


class ModelFileError(StructpercError):
    """A model file is missing, corrupt, or written by an incompatible version."""


class ConfigError(StructpercError):
    """An option or template is invalid."""


class DataError(StructpercError, ValueError):
    """Data given to the Python API has the wrong shape: a str where a list of tokens is expected,
    labels that do not match the tokens, no sentences. The message names the sentence."""


class ModelNameError(StructpercError, ValueError):
    """A named model is unknown, or a name is not one a model may have (``models.cache.checked_name``)."""


class DataFetchError(StructpercError):
    """A corpus could not be fetched or failed its checksum."""


class StructpercWarning(UserWarning):
    """Something in the input is probably not what the user meant; reading goes on.

    `path` and `line` (when known) say where; the CLI prints ``path:line: warning: message``.
    """

    def __init__(self, message, path=None, line=None):
        self.path = None if path is None else str(path)
        self.line = line
        self.message = message
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(message if where is None else f"{where}: {message}")
