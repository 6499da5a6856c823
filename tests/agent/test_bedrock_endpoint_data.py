"""A Bedrock client is placed from botocore's endpoint data cut to bedrock-runtime (cached)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import botocore.loaders
import botocore.session
import pytest
from botocore.regions import EndpointResolver

from agent.bedrock import client as client_module
from agent.bedrock import endpoint_data
from agent.bedrock.client import SERVICE, make_client

REGIONS = ["us-east-1", "us-west-2", "eu-central-1", "ap-northeast-1", "ca-central-1",
           "us-gov-west-1", "cn-north-1", "eu-isoe-west-1", "us-iso-east-1", "xx-nowhere-9"]  # fmt: skip


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        monkeypatch.setenv(f"XDG_{name}_HOME", str(tmp_path / name.lower()))
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-a-real-secret")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))


def test_the_cut_data_places_bedrock_runtime_exactly_as_the_whole_file() -> None:
    whole = botocore.loaders.Loader().load_data("endpoints")
    full = EndpointResolver(whole)
    cut = EndpointResolver(endpoint_data.cut(whole, SERVICE))
    for region in REGIONS:
        for fips in (False, True):
            for dualstack in (False, True):
                try:
                    expected: Any = full.construct_endpoint(SERVICE, region, None, dualstack, fips)
                except Exception as exc:  # noqa: BLE001 - the same error is what counts
                    expected = repr(exc)
                try:
                    got: Any = cut.construct_endpoint(SERVICE, region, None, dualstack, fips)
                except Exception as exc:  # noqa: BLE001
                    got = repr(exc)
                assert got == expected, (region, fips, dualstack)
    assert len(json.dumps(endpoint_data.cut(whole, SERVICE))) < len(json.dumps(whole)) / 20


def _fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget the endpoint data this process's loader holds, as a new process would."""
    monkeypatch.setattr(client_module._LOADER, "_endpoints", None)


def test_clients_go_where_a_plain_botocore_client_goes(monkeypatch: pytest.MonkeyPatch) -> None:
    for region in ("us-east-1", "eu-central-1", "us-gov-west-1", "cn-north-1"):
        plain = botocore.session.Session().create_client(SERVICE, region_name=region)
        _fresh_process(monkeypatch)
        ours = make_client(None, region)  # the first makes the cached copy, the others read it
        assert endpoint_data.cache_file(SERVICE).exists()
        assert ours.meta.endpoint_url == plain.meta.endpoint_url, region
        assert ours.meta.region_name == plain.meta.region_name


def _loader_over(directory: Path) -> botocore.loaders.Loader:
    return botocore.loaders.Loader(
        extra_search_paths=[str(directory)], include_default_search_paths=False
    )


def _write_source(directory: Path, services: dict[str, Any]) -> None:
    partition = {"partition": "aws", "regions": {"us-east-1": {}}, "services": services,
                 "dnsSuffix": "amazonaws.com", "defaults": {"hostname": "{service}.{region}.{dnsSuffix}"}}  # fmt: skip
    (directory / "endpoints.json").write_text(json.dumps({"partitions": [partition], "version": 3}))


def test_the_cached_copy_is_made_again_when_the_source_changes(tmp_path: Path) -> None:
    source = tmp_path / "models"
    source.mkdir()
    _write_source(source, {SERVICE: {"endpoints": {"us-east-1": {}}}, "s3": {"endpoints": {}}})
    loader = _loader_over(source)
    loads: list[str] = []

    def load(name: str) -> tuple[Any, str]:
        loads.append(name)
        return botocore.loaders.Loader.load_data_with_path(loader, name)

    first, path = endpoint_data.service_endpoints(loader, SERVICE, load)
    assert list(first["partitions"][0]["services"]) == [SERVICE]
    assert path == str(source / "endpoints")
    again, _ = endpoint_data.service_endpoints(loader, SERVICE, load)
    assert again == first and loads == ["endpoints"]  # the second came from the cache

    _write_source(source, {SERVICE: {"endpoints": {"us-east-1": {"hostname": "changed.example"}}}})
    loader = _loader_over(source)  # botocore's loader caches what it read, per instance
    changed, _ = endpoint_data.service_endpoints(loader, SERVICE, load)
    assert changed["partitions"][0]["services"][SERVICE]["endpoints"]["us-east-1"] == {
        "hostname": "changed.example"
    }
    assert loads == ["endpoints", "endpoints"]


def test_an_unwritable_cache_directory_only_costs_the_full_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    _fresh_process(monkeypatch)
    client = make_client(None, "eu-central-1")
    assert client.meta.endpoint_url == "https://bedrock-runtime.eu-central-1.amazonaws.com"


def test_a_damaged_cached_copy_is_made_again(monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh_process(monkeypatch)
    make_client(None, "us-east-1")
    cached = endpoint_data.cache_file(SERVICE)
    stored = json.loads(cached.read_text())
    stored["data"] = {"no": "partitions"}  # the right stamp over the wrong data
    cached.write_text(json.dumps(stored))
    _fresh_process(monkeypatch)
    assert make_client(None, "eu-west-1").meta.endpoint_url == (
        "https://bedrock-runtime.eu-west-1.amazonaws.com"
    )
    cached.write_text('{"stamp": [')  # cut short
    _fresh_process(monkeypatch)
    assert make_client(None, "eu-west-1").meta.region_name == "eu-west-1"
    assert "partitions" in json.loads(cached.read_text())["data"]
