"""The kernel cache guard: stale numba caches are deleted when any source under kernels/ changes
(a new kernel file included), beside the sources or under NUMBA_CACHE_DIR (numba's own folder
rule), and left alone otherwise."""
import os

from robot_dynamics.kernels import cache_guard


def _fake_package(tmp_path):
    pkg = tmp_path / "robot_dynamics"
    for name in ("layout.py", "dynamics.py", "friction.py", "fd.py"):
        path = pkg / "kernels" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {name}\n")
    return pkg


def _caches(folders):
    for folder in folders:
        os.makedirs(folder, exist_ok=True)
        for name in ("fd._step-1.py311.nbi", "fd._step-1.py311.1.nbc"):
            open(os.path.join(folder, name), "w").close()


def _count(folders):
    return sum(len([f for f in os.listdir(d) if f.endswith((".nbi", ".nbc"))])
               for d in folders if os.path.isdir(d))


def _check(monkeypatch, pkg):
    monkeypatch.setattr(cache_guard, "_KERNELS", str(pkg / "kernels"))
    folders = cache_guard._cache_folders()
    _caches(folders)
    cache_guard.guard()  # no stamp yet: cleared, stamped
    assert _count(folders) == 0
    _caches(folders)
    cache_guard.guard()  # same sources: kept
    assert _count(folders) == 2 * len(folders)
    (pkg / "kernels" / "friction.py").write_text("# edited\n")
    cache_guard.guard()  # a source changed: cleared
    assert _count(folders) == 0
    _caches(folders)
    (pkg / "kernels" / "contact.py").write_text("# a new kernel file\n")
    cache_guard.guard()  # a file added: cleared (no list to keep by hand)
    assert _count(folders) == 0
    return folders


def test_caches_beside_the_sources(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    pkg = _fake_package(tmp_path)
    folders = _check(monkeypatch, pkg)
    assert folders[0] == str(pkg / "kernels" / "__pycache__")


def test_caches_under_numba_cache_dir(tmp_path, monkeypatch):
    from numba.core.caching import UserProvidedCacheLocator

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    pkg = _fake_package(tmp_path)
    folders = _check(monkeypatch, pkg)
    # the folder numba itself uses for a kernel file of the package
    expected = UserProvidedCacheLocator.get_suitable_cache_subpath(str(pkg / "kernels" / "fd.py"))
    assert folders[0] == str(tmp_path / "cache" / expected)
    assert not (pkg / "kernels" / "__pycache__").exists()


def test_the_compile_is_announced_on_any_stderr(tmp_path, monkeypatch, capsys):
    """One line on stderr (here a pytest capture, not a terminal) whenever a compile is about
    to start — caches cleared, or a stamp without caches — and none when the cache is valid."""
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.delenv("NUMBA_DISABLE_JIT", raising=False)
    pkg = _fake_package(tmp_path)
    monkeypatch.setattr(cache_guard, "_KERNELS", str(pkg / "kernels"))
    folders = cache_guard._cache_folders()
    cache_guard.guard()  # no stamp: a compile follows
    err = capsys.readouterr().err
    assert err == cache_guard.COMPILING + "\n"
    assert "compiling the dynamics kernels" in err and "minutes" in err
    cache_guard.guard()  # stamped, but still no cache (an interrupted first run): announced
    assert capsys.readouterr().err == cache_guard.COMPILING + "\n"
    _caches(folders)
    cache_guard.guard()  # stamped and cached: silent
    assert capsys.readouterr().err == ""
    (pkg / "kernels" / "fd.py").write_text("# edited\n")
    cache_guard.guard()  # a source changed: cleared and announced
    assert capsys.readouterr().err == cache_guard.COMPILING + "\n" and _count(folders) == 0
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "1")  # nothing compiles: nothing to announce
    (pkg / "kernels" / "fd.py").write_text("# edited again\n")
    cache_guard.guard()
    assert capsys.readouterr().err == ""
