"""sha256 verification of local files: clear errors, the opt-outs and the cached digest."""

import gzip
import hashlib
import shutil

import pytest

from otfair.datasets import ChecksumError, _fetch, _verify, load_dataset, load_domain_shift


@pytest.fixture
def truncated_adult(tmp_path, isolated_data, data_dir):
    """``data_home`` with adult.data cut to its first 15,981 lines (as in the issue)."""
    home = tmp_path / "home"
    (home / "adult").mkdir(parents=True)
    lines = (data_dir / "adult" / "adult.data").read_bytes().splitlines(keepends=True)
    (home / "adult" / "adult.data").write_bytes(b"".join(lines[:15_982]))  # header + rows
    shutil.copy(data_dir / "adult" / "adult.test", home / "adult" / "adult.test")
    return home


def test_every_shipped_file_matches_the_registry(data_dir):
    """The shared copies are the registry's bytes (the .gz by its own digest)."""
    from otfair.datasets._status import data_status

    states = {s.relpath: (s.state, s.directory.path) for s in data_status(verify=True)}
    assert all(state == "ok" for state, _ in states.values()), states
    for relpath, (_, directory) in states.items():
        digest = hashlib.sha256((directory / relpath).read_bytes()).hexdigest()
        assert digest == _fetch.REMOTE_FILES[relpath].sha256


def test_truncated_file_is_refused(truncated_adult):
    path = truncated_adult / "adult" / "adult.data"
    found = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(ChecksumError) as info:
        load_dataset("adult", data_home=truncated_adult)
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    assert _fetch.REMOTE_FILES["adult/adult.data"].sha256 in message and found in message
    assert "Fix: replace it with `otfair datasets fetch adult --force`" in message
    assert "OTFAIR_VERIFY=0" in message and "verify=False" in message


def test_opt_outs_load_the_edited_copy(truncated_adult, monkeypatch):
    ds = load_dataset("adult", data_home=truncated_adult, verify=False)
    raw_rows = 15_981 + 16_281
    assert f"({raw_rows:,} rows)" in ds.description and "48,842" not in ds.description
    assert len(ds) < 45_222
    monkeypatch.setenv("OTFAIR_VERIFY", "0")
    assert len(load_dataset("adult", data_home=truncated_adult)) == len(ds)
    with pytest.raises(ChecksumError):  # an explicit argument wins over the variable
        load_dataset("adult", data_home=truncated_adult, verify=True)
    monkeypatch.delenv("OTFAIR_VERIFY")
    with pytest.raises(ChecksumError):
        load_domain_shift("adult_country", data_home=truncated_adult)
    assert len(load_domain_shift("adult_country", data_home=truncated_adult, verify=False).source)


def test_digest_is_remembered(tmp_path, isolated_data, monkeypatch):
    calls = []
    real = _verify.sha256_stream
    monkeypatch.setattr(_verify, "sha256_stream", lambda fh: calls.append(1) or real(fh))
    path = tmp_path / "f.bin"
    path.write_bytes(b"abc")
    expected = hashlib.sha256(b"abc").hexdigest()
    assert _verify.file_sha256(path) == expected and len(calls) == 1
    assert _verify.file_sha256(path) == expected and len(calls) == 1  # in-process memo
    _verify.forget()
    assert _verify.file_sha256(path) == expected and len(calls) == 1  # the record file
    assert _verify.record_path().parent == isolated_data
    path.write_bytes(b"abcd")  # size (and mtime) change: hashed again
    assert _verify.file_sha256(path) == hashlib.sha256(b"abcd").hexdigest()
    assert len(calls) == 2


def test_a_same_size_edit_with_its_mtime_set_back_is_hashed_again(tmp_path, isolated_data):
    # (size, mtime) alone were fooled by this: setting the mtime back sets the ctime to now
    import os
    import time

    path = tmp_path / "f.bin"
    path.write_bytes(b"abc")
    before = path.stat()
    assert _verify.file_sha256(path) == hashlib.sha256(b"abc").hexdigest()
    path.write_bytes(b"abd")  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    for _ in range(100):  # the ctime clock is coarse: wait for it to tick past the hash
        if path.stat().st_ctime_ns != before.st_ctime_ns:
            break
        time.sleep(0.01)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert _verify.file_sha256(path) == hashlib.sha256(b"abd").hexdigest()  # in-process
    _verify.forget()
    assert _verify.file_sha256(path) == hashlib.sha256(b"abd").hexdigest()  # the record


def test_recompressed_gzip_is_accepted_by_content(tmp_path, isolated_data, monkeypatch):
    """A user's own gzip of a csv has other bytes than the registry's .gz, same content."""
    content = b"a,b\n" + b"1,2\n" * 1000
    shipped = gzip.compress(content, 9, mtime=0)
    remote = _fetch.RemoteFile("", _sha(shipped), content_sha256=_sha(content))
    monkeypatch.setitem(_fetch.REMOTE_FILES, "d/x.csv.gz", remote)
    path = tmp_path / "x.csv.gz"
    path.write_bytes(gzip.compress(content, 1, mtime=1))
    assert _sha(path.read_bytes()) != remote.sha256
    _fetch.check_file(path, "d/x.csv.gz")  # accepted by content
    path.write_bytes(gzip.compress(content[:-4], 1, mtime=1))
    with pytest.raises(ChecksumError, match="x.csv.gz differs"):
        _fetch.check_file(path, "d/x.csv.gz")
    path.write_bytes(b"not gzip at all")
    with pytest.raises(ChecksumError, match="x.csv.gz differs"):
        _fetch.check_file(path, "d/x.csv.gz")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
