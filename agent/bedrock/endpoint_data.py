"""botocore's endpoint data cut to the one service a client is made for, cached on disk.

A botocore session's endpoint resolver reads `endpoints.json` (1.2 MB: every AWS service in
every partition) to place one client; parsing it is a sizeable share of a headless turn. The
resolver reads only the partitions and the asked service's entry, so this keeps every
partition field and, of each partition's services, only that one: the resolver answers as
with the whole file. The cut copy lives in tabletalk's cache directory and is used while its
source (the file botocore's loader would read, so `~/.aws/models` and AWS_DATA_PATH still
win) has the same path, size and mtime under the same botocore version; else it is made again.
Writing the cache is best effort: a read-only cache directory only costs the full parse.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import botocore
import botocore.loaders

from agent import paths
from agent.json_state import read_json, write_json

NAME = "endpoints"
EXTENSIONS = (".json", ".json.gz")
"""The file endings botocore's JSONFileLoader reads, in its order."""

Loaded = tuple[Any, str]
"""(data, path without extension), as `Loader.load_data_with_path` returns them."""


def cache_file(service: str) -> Path:
    """Where the cut copy for `service` is kept."""
    return paths.cache_dir() / "botocore" / f"{NAME}-{service}.json"


def _source(loader: botocore.loaders.Loader) -> tuple[str, str] | None:
    """(path without extension, file) the loader would read `endpoints` from; None when it is
    a kind of file this module does not know (then the loader reads it itself)."""
    for directory in loader.search_paths:
        base = os.path.join(directory, NAME)
        if os.path.isdir(directory) and loader.file_loader.exists(base):
            for extension in EXTENSIONS:
                if os.path.isfile(base + extension):
                    return base, base + extension
            return None
    return None


def cut(data: Any, service: str) -> Any:
    """`data` with each partition's services cut to `service` (everything else kept)."""
    partitions = data.get("partitions") if isinstance(data, dict) else None
    if not isinstance(partitions, list):
        return data
    kept = []
    for partition in partitions:
        services = partition.get("services") if isinstance(partition, dict) else None
        if isinstance(services, dict):
            partition = {
                **partition,
                "services": {k: v for k, v in services.items() if k == service},
            }
        kept.append(partition)
    return {**data, "partitions": kept}


def service_endpoints(
    loader: botocore.loaders.Loader, service: str, load: Callable[[str], Loaded]
) -> Loaded:
    """The endpoint data for a client of `service` (see the module docstring); `load` is the
    loader's own `load_data_with_path`."""
    source = _source(loader)
    if source is None:
        return load(NAME)
    base, file = source
    try:
        stat = os.stat(file)
    except OSError:
        return load(NAME)
    stamp = [file, stat.st_size, stat.st_mtime_ns, botocore.__version__, service]
    cached = cache_file(service)
    stored = read_json(cached)
    if isinstance(stored, dict) and stored.get("stamp") == stamp:
        data = stored.get("data")
        if isinstance(data, dict) and isinstance(data.get("partitions"), list):
            return data, base
    data, path = load(NAME)
    small = cut(data, service)
    if path == base:
        write_json(cached, {"stamp": stamp, "data": small})
    return small, path
