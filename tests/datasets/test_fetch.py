"""Search order, download (against a local HTTP server), checksum and atomic writes."""

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from otfair.datasets import (
    DataDirError,
    DataFileError,
    MalformedFileError,
    _fetch,
    fetch_file,
    get_data_home,
    load_dataset,
    search_dirs,
)
from otfair.datasets._fetch import RemoteFile

pytestmark = pytest.mark.network


@pytest.fixture
def home(tmp_path, isolated_data):
    path = tmp_path / "home"
    path.mkdir()
    return path


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _leftovers(path: Path) -> list[str]:
    return sorted(p.name for p in path.rglob("*") if p.is_file())


def test_good_download_is_cached(http_server, home, monkeypatch):
    root, url, requests = http_server
    payload = b"a,b\n1,2\n"
    (root / "f.csv").write_bytes(payload)
    monkeypatch.setitem(_fetch.REMOTE_FILES, "x/f.csv", RemoteFile(f"{url}/f.csv", _sha(payload)))
    seen = []
    path = fetch_file("x/f.csv", home, progress=lambda done, total: seen.append((done, total)))
    assert path == home / "x" / "f.csv" and path.read_bytes() == payload
    assert seen[-1] == (len(payload), len(payload))  # progress reached the Content-Length
    assert _leftovers(home) == ["f.csv"]  # no temporary file left
    fetch_file("x/f.csv", home)
    assert requests == ["/f.csv"]  # downloaded once


def test_zip_member_download(http_server, home, monkeypatch):
    root, url, _ = http_server
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as zf:
        zf.writestr("sub/data.csv", b"x\n1\n")
    outer = io.BytesIO()
    with zipfile.ZipFile(outer, "w") as zf:
        zf.writestr("inner.zip", inner.getvalue())
    (root / "a.zip").write_bytes(outer.getvalue())
    remote = RemoteFile(f"{url}/a.zip", _sha(b"x\n1\n"), ("inner.zip", "data.csv"))
    monkeypatch.setitem(_fetch.REMOTE_FILES, "z/data.csv", remote)
    assert fetch_file("z/data.csv", home).read_bytes() == b"x\n1\n"


def test_corrupt_download_leaves_nothing(http_server, home, monkeypatch):
    root, url, _ = http_server
    (root / "f.csv").write_bytes(b"tampered")
    monkeypatch.setitem(_fetch.REMOTE_FILES, "x/f.csv", RemoteFile(f"{url}/f.csv", _sha(b"ok")))
    with pytest.raises(DataFileError, match="Checksum mismatch for x/f.csv.*OTFAIR_DATA_DIR"):
        fetch_file("x/f.csv", home)
    assert _leftovers(home) == []


def test_server_down(home, monkeypatch, unreachable_url):
    remote = RemoteFile(f"{unreachable_url}/f.csv", _sha(b"ok"))
    monkeypatch.setitem(_fetch.REMOTE_FILES, "x/f.csv", remote)
    with pytest.raises(DataFileError, match="Could not download x/f.csv") as info:
        fetch_file("x/f.csv", home)
    message = str(info.value)
    assert "\n" not in message and "Fix: run `otfair datasets fetch x`" in message
    assert f"copy the file by hand to {home / 'x' / 'f.csv'}" in message
    assert _leftovers(home) == []


def test_http_404(http_server, home, monkeypatch):
    _, url, _ = http_server
    monkeypatch.setitem(_fetch.REMOTE_FILES, "x/f.csv", RemoteFile(f"{url}/nope", _sha(b"")))
    with pytest.raises(DataFileError, match="Could not download"):
        fetch_file("x/f.csv", home)


def test_loader_downloads_real_file_through_registry(http_server, home, monkeypatch, data_dir):
    root, url, _ = http_server
    (root / "german.data").write_bytes((data_dir / "german" / "german.data").read_bytes())
    entry = _fetch.REMOTE_FILES["german/german.data"]
    monkeypatch.setitem(
        _fetch.REMOTE_FILES, "german/german.data", RemoteFile(f"{url}/german.data", entry.sha256)
    )
    assert len(load_dataset("german", data_home=home)) == 1000
    assert (home / "german" / "german.data").is_file()


def test_search_order(tmp_path, isolated_data, monkeypatch):
    first, env = tmp_path / "first", tmp_path / "env"
    for d in (first, env, isolated_data):
        (d / "x").mkdir(parents=True)
    monkeypatch.setitem(_fetch.REMOTE_FILES, "x/f.csv", RemoteFile("", ""))
    (isolated_data / "x" / "f.csv").write_text("cache")
    assert fetch_file("x/f.csv").read_text() == "cache"  # only the cache is searched
    monkeypatch.setenv("OTFAIR_DATA_DIR", str(env))
    assert [d.label for d in search_dirs(first)] == ["data_home", "$OTFAIR_DATA_DIR", "user cache"]
    assert fetch_file("x/f.csv", first).read_text() == "cache"  # falls through to the cache
    (env / "x" / "f.csv").write_text("env")
    assert fetch_file("x/f.csv", first).read_text() == "env"  # the variable beats the cache
    (first / "x" / "f.csv").write_text("first")
    assert fetch_file("x/f.csv", first).read_text() == "first"  # data_home beats both
    assert get_data_home(first) == first and get_data_home() == env


def test_downloads_go_to_the_first_directory(http_server, tmp_path, isolated_data, monkeypatch):
    root, url, _ = http_server
    (root / "f.csv").write_bytes(b"1\n")
    monkeypatch.setitem(_fetch.REMOTE_FILES, "x/f.csv", RemoteFile(f"{url}/f.csv", _sha(b"1\n")))
    assert fetch_file("x/f.csv") == isolated_data / "x" / "f.csv"  # the cache, created
    env = tmp_path / "env"
    env.mkdir()
    monkeypatch.setenv("OTFAIR_DATA_DIR", str(env))
    (isolated_data / "x" / "f.csv").unlink()
    assert fetch_file("x/f.csv") == env / "x" / "f.csv"


def test_data_home_resolution(tmp_path, isolated_data, monkeypatch):
    monkeypatch.setenv("OTFAIR_DATA_DIR", str(tmp_path))
    assert get_data_home() == tmp_path
    monkeypatch.delenv("OTFAIR_DATA_DIR")
    assert get_data_home() == isolated_data and isolated_data.is_dir()
    assert get_data_home(tmp_path) == tmp_path


def test_bad_data_home(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="`data_home` = .*missing.* does not exist"):
        load_dataset("adult", data_home=tmp_path / "missing")
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(DataDirError, match="is not a directory"):
        load_dataset("adult", data_home=afile)
    monkeypatch.setenv("OTFAIR_DATA_DIR", str(tmp_path / "gone"))
    with pytest.raises(DataFileError, match=r"\$OTFAIR_DATA_DIR = .* does not exist.* Fix: "):
        load_dataset("adult")


def test_missing_file_without_address(home):
    with pytest.raises(DataFileError, match="has no download address. Fix: run `otfair"):
        fetch_file("nowhere/file.csv", home)


def test_unwritable_first_directory(http_server, home, monkeypatch):
    root, url, _ = http_server
    (root / "f.csv").write_bytes(b"1\n")
    monkeypatch.setitem(_fetch.REMOTE_FILES, "x/f.csv", RemoteFile(f"{url}/f.csv", _sha(b"1\n")))
    (home / "x").write_text("a file where the folder should be")
    with pytest.raises(DataFileError, match="Could not write .* Fix: pass a writable directory"):
        fetch_file("x/f.csv", home)


def test_malformed_file_names_the_file(home):
    (home / "adult").mkdir()
    for name in ("adult.data", "adult.test"):
        (home / "adult" / name).write_text("a,b,c\n1,2,3\n")
    with pytest.raises(MalformedFileError, match=r"adult\.data is malformed.*'age'") as info:
        load_dataset("adult", data_home=home, verify=False)
    assert str(info.value).endswith(
        "Fix: restore the original with `otfair datasets fetch adult --force` (or fix the file)."
    )
    (home / "german").mkdir()
    (home / "german" / "german.data").write_text("A11 6\nA12 7\n")
    with pytest.raises(MalformedFileError, match="german.data is malformed: 2 columns"):
        load_dataset("german", data_home=home, verify=False)


def test_error_pickles_with_its_hint():
    import pickle

    exc = pickle.loads(pickle.dumps(DataFileError("a\nb.", "do c.")))
    assert str(exc) == "a b. Fix: do c." and exc.hint == "do c."
