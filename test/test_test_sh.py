"""scripts/test.sh: alone or with options only it runs the whole test folder; given test files,
folders or node ids it runs just those (the folder is not added). Run with a stand-in python3
(it prints its arguments) and a stand-in interface build, so nothing is tested twice."""
import os
import shutil
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def run(tmp_path):
    (tmp_path / "scripts").mkdir()
    shutil.copy(os.path.join(REPO, "scripts", "test.sh"), tmp_path / "scripts" / "test.sh")
    prefix = tmp_path / "prefix"
    prefix.mkdir()
    (prefix / "env.sh").write_text("")
    (tmp_path / "scripts" / "build_test_interfaces.sh").write_text(f"echo {prefix}\n")
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "test_a.py").write_text("")
    (tmp_path / "test" / "test_b.py").write_text("")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python3"
    fake.write_text('#!/bin/sh\necho "ARGS $*"\n')
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    env.pop("CI", None)

    def args(*words):
        out = subprocess.run(["bash", str(tmp_path / "scripts" / "test.sh"), *words], env=env,
                             cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        line = [x for x in out.stdout.splitlines() if x.startswith("ARGS ")]
        return line[-1].split()[1:]
    return args


def test_alone_runs_the_whole_folder(run):
    assert run() == ["-m", "pytest", "-q", "-ra", "test"]


def test_options_only_keep_the_whole_folder(run):
    assert run("-k", "test", "-x") == ["-m", "pytest", "-q", "-ra", "test", "-k", "test", "-x"]
    assert run("--ignore", "test/test_a.py")[4] == "test"  # an option's value is no target


@pytest.mark.parametrize("words", [
    ["test/test_a.py"],
    ["test/test_a.py", "test/test_b.py", "-x"],
    ["test/test_a.py::test_one"],
    ["-k", "fd", "test/test_b.py"],
])
def test_files_and_node_ids_run_alone(run, words):
    got = run(*words)
    assert got == ["-m", "pytest", "-q", "-ra", *words]
    assert "test" not in got
