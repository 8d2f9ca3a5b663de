"""Logging, configuration and output files, without WIT plumbing.

- `info("...")`, `warn(...)`, `error(...)`, `debug(...)`: the host's log,
  with the stage's name (rate-limited by the stage's `log_per_second`).
  `print` also works -- a WASI guest's stdout is logged at info, stderr at
  warn -- but costs more.
- `config_get("key", default, int)`: the stage's `config` table, flattened
  to strings (`a.b` for nested keys); converted with `type`, a bad value
  raises `PluginError` naming the key.
- `write_file(name, data)`: a file in the output directory the chain grants
  the stage; returns an error sentence (or None) instead of raising, since
  a missing grant is normal (`NOT_GRANTED` is that sentence).
- `write_result(plugin, name, data)`: the same for a file that repeats a
  summary table: quiet (one info line) without a grant, a warning on any
  other refusal; True when written.
"""

from componentize_py_types import Err
from wit_world.imports import config, log, output
from wit_world.imports.types import LogLevel

from .plugin import PluginError


def debug(message):
    log.log(LogLevel.DEBUG, str(message))


def info(message):
    log.log(LogLevel.INFO, str(message))


def warn(message):
    log.log(LogLevel.WARN, str(message))


def error(message):
    log.log(LogLevel.ERROR, str(message))


def config_entries():
    """Every `(key, value)` of the stage config."""
    return list(config.entries())


def config_get(key, default=None, type=str):
    """The config value of `key` converted by `type`, or `default`."""
    raw = config.get(key)
    if raw is None:
        return default
    raw = raw.strip()
    if type is bool:
        if raw.lower() in ("true", "1", "yes"):
            return True
        if raw.lower() in ("false", "0", "no"):
            return False
        raise PluginError(f"config key `{key}` must be true or false, not `{raw}`")
    try:
        return type(raw.strip('"') if type is str else raw)
    except ValueError:
        raise PluginError(
            f"config key `{key}` must be a {type.__name__}, not `{raw}`"
        ) from None


#: The host's answer to every output call of a stage the chain grants no
#: output directory (WIT 0.2.0, `output`): the chain wants no files from it.
NOT_GRANTED = "no output directory is granted to this plugin"

_not_granted = False


def write_file(name, data):
    """Creates or replaces `name` in the granted directory; None on
    success, else the host's sentence (e.g. no output directory granted)."""
    if isinstance(data, str):
        data = data.encode()
    try:
        output.write(name, bytes(data))
    except Err as e:
        return str(e.value)
    return None


def write_result(plugin, name, data):
    """Writes `name`, a file holding what the plugin also returns as a
    summary table, as the stock plugins do; True when written. Without an
    output grant (the chain asked for the tables only) nothing is written
    and one info-level line per instance says so; any other refusal is a
    warning naming the file and the host's reason."""
    global _not_granted
    if _not_granted:
        return False
    err = write_file(name, data)
    if err is None:
        return True
    if err == NOT_GRANTED:
        _not_granted = True
        info(f"{plugin}: {name} not written: the chain grants no output directory "
             "(the table is in the summary)")
    else:
        warn(f"{plugin}: cannot write {name}: {err}")
    return False
