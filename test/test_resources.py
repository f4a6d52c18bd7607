"""Where the bundled robots are found: ROS share, sys.prefix, the package's own install prefix
(pip install --user), the source tree."""
import os
import sys

import pytest

from robot_dynamics.parsers import resources
from robot_dynamics.errors import ModelError


@pytest.fixture
def lookup(monkeypatch, tmp_path):
    """share_directory() with no ROS, no source tree and sys.prefix in tmp_path."""
    monkeypatch.setitem(sys.modules, "ament_index_python.packages", None)  # import fails
    monkeypatch.setattr(resources, "_SOURCE_TREE", str(tmp_path / "no_checkout"))
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "venv"))
    resources.share_directory.cache_clear()
    yield
    resources.share_directory.cache_clear()


def _user_layout(base):
    """A `pip install --user` tree: the package in lib/python3.X/site-packages, the data in
    share/robot_dynamics."""
    package = base / "lib" / "python3.11" / "site-packages" / "robot_dynamics"
    package.mkdir(parents=True)
    share = base / "share" / "robot_dynamics"
    (share / "urdf").mkdir(parents=True)
    (share / "urdf" / "planar_2r.urdf").write_text("<robot name='planar_2r'/>")
    return package, share


def test_user_install_found_from_the_package_location(lookup, monkeypatch, tmp_path):
    package, share = _user_layout(tmp_path / "ub")
    monkeypatch.setattr(resources, "_PACKAGE_DIR", str(package))
    assert resources.share_directory() == str(share)
    assert resources.robot_path("planar_2r") == str(share / "urdf" / "planar_2r.urdf")


def test_package_prefix_of_install_layouts():
    posix = os.path.join("/p", "lib", "python3.11", "site-packages", "robot_dynamics")
    windows = os.path.join("/p", "Lib", "site-packages", "robot_dynamics")
    assert resources._package_prefix(posix) == "/p"
    assert resources._package_prefix(windows) == "/p"
    assert resources._package_prefix(os.path.join("/src", "robot_dynamics")) is None


def test_nothing_found_lists_every_place(lookup, monkeypatch, tmp_path):
    package, _ = _user_layout(tmp_path / "empty")
    (tmp_path / "empty" / "share" / "robot_dynamics" / "urdf" / "planar_2r.urdf").unlink()
    (tmp_path / "empty" / "share" / "robot_dynamics" / "urdf").rmdir()
    monkeypatch.setattr(resources, "_PACKAGE_DIR", str(package))
    with pytest.raises(ModelError, match="cannot find the bundled robots") as info:
        resources.share_directory()
    assert str(tmp_path / "empty" / "share" / "robot_dynamics") in str(info.value)


def test_source_tree_still_found(monkeypatch):
    monkeypatch.setitem(sys.modules, "ament_index_python.packages", None)
    resources.share_directory.cache_clear()
    try:
        assert os.path.isdir(os.path.join(resources.share_directory(), "urdf"))
    finally:
        resources.share_directory.cache_clear()


def test_bundled_robots_are_listed_by_the_names_that_resolve(tmp_path, monkeypatch):
    """A xacro-only robot is listed and typed by its bare name; a xacro twin of a plain URDF is
    not listed (the URDF is the robot) but its file name still resolves."""
    from robot_dynamics.parsers import resources

    urdf = tmp_path / "urdf"
    urdf.mkdir()
    for name in ("arm.urdf", "arm.urdf.xacro", "two_arms.urdf.xacro", "notes.txt"):
        (urdf / name).write_text("<robot/>")
    monkeypatch.setattr(resources, "share_directory", lambda: str(tmp_path))
    assert resources.bundled_robots() == ["arm", "two_arms"]
    assert resources.robot_path("arm") == str(urdf / "arm.urdf")
    assert resources.robot_path("two_arms") == str(urdf / "two_arms.urdf.xacro")
    assert resources.robot_path("arm.urdf.xacro") == str(urdf / "arm.urdf.xacro")
    assert resources.robot_path("two_arms.urdf.xacro") == str(urdf / "two_arms.urdf.xacro")
    with pytest.raises(ModelError, match=r"did you mean 'two_arms'\? bundled robots: arm, "
                                         r"two_arms \(or a URDF or \.urdf\.xacro path\)$"):
        resources.robot_path("two_arm")
    calls = []
    robot_files = resources._robot_files
    monkeypatch.setattr(resources, "_robot_files", lambda d: calls.append(d) or robot_files(d))
    help_text = resources.robot_help()
    assert "(arm, two_arms)" in help_text and "e.g. the bundled arm.urdf.xacro" in help_text
    assert len(calls) == 2  # the folder's names once for the list, once for the twins (not
    # once per xacro file)


def test_an_unknown_robot_is_named_with_the_bundled_ones(tmp_path, monkeypatch):
    """`sim --robot nothing`: the message names the robot given, says it is neither a bundled
    robot nor an existing file (it used to say "no bundled urdf file", the folder's name), and
    lists the bundled names as --help does (robot_help's list, not a Python list)."""
    from robot_dynamics.parsers.resources import bundled_robots, robot_help, robot_path

    monkeypatch.chdir(tmp_path)  # no file 'nothing' here
    with pytest.raises(ModelError) as err:
        robot_path("nothing")
    listed = ", ".join(bundled_robots())
    assert str(err.value) == (f"robot 'nothing' is neither a bundled robot nor a file that "
                              f"exists; bundled robots: {listed} (or a URDF or .urdf.xacro path)")
    assert f"({listed})" in robot_help()


def test_every_listed_robot_resolves():
    """The real listing: names a user can type, each resolving to a bundled file."""
    from robot_dynamics.parsers.resources import bundled_robots, robot_path

    names = bundled_robots()
    assert "planar_2r" in names and not any(n.endswith((".urdf", ".xacro")) for n in names)
    for name in names:
        assert os.path.isfile(robot_path(name)), name
