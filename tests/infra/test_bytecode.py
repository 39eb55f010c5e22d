"""butai_tools.bytecode: the deployment zip gains unchecked hash-based bytecode that a fresh
interpreter really loads from a read-only-style unpacked package (no bytecode written)."""
import os
import subprocess
import sys
import zipfile

from butai_tools import bytecode


def _zip(path, files):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)


def _import_value(root):
    # No bytecode may be written: the interpreter has to find the packaged files or compile in memory.
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run([sys.executable, "-s", "-c",
                          "import sys; sys.path.insert(0, sys.argv[1]); import pkg.mod as m; "
                          "print(m.VALUE, m.__spec__.cached)", str(root)],
                         env=env, capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_bytecode_is_added_next_to_each_module_and_loaded_without_the_source_check(tmp_path):
    package = tmp_path / "deployment.zip"
    _zip(package, {"app.py": "X = 1\n", "pkg/__init__.py": "", "pkg/mod.py": "VALUE = 'packaged'\n",
                   "pkg/data.json": "{}", "old/py2.py": "print 'no'\n"})
    added = bytecode.add_bytecode(package)
    assert added.compiled == 3 and added.failed == ["old/py2.py"]
    with zipfile.ZipFile(package) as archive:
        names = set(archive.namelist())
        archive.extractall(tmp_path / "task")
    tag = sys.implementation.cache_tag
    assert {f"__pycache__/app.{tag}.pyc", f"pkg/__pycache__/mod.{tag}.pyc",
            f"pkg/__pycache__/__init__.{tag}.pyc"} <= names
    # Unchecked: an edited source is not compared with the bytecode, so the packaged code runs,
    # which proves the interpreter loaded the file from the zip rather than compiling the source.
    (tmp_path / "task" / "pkg" / "mod.py").write_text("VALUE = 'edited'\n", encoding="utf-8")
    value, cached = _import_value(tmp_path / "task")
    assert value == "packaged" and cached.endswith(f"mod.{tag}.pyc")


def test_adding_twice_adds_nothing_new(tmp_path):
    package = tmp_path / "deployment.zip"
    _zip(package, {"a.py": "A = 1\n"})
    bytecode.add_bytecode(package)
    again = bytecode.add_bytecode(package)
    assert again.compiled == 0 and again.already_present == 1
    with zipfile.ZipFile(package) as archive:
        assert len(archive.namelist()) == 2


def test_a_template_for_another_runtime_is_refused(tmp_path):
    package = tmp_path / "deployment.zip"
    _zip(package, {"a.py": "A = 1\n"})
    template = tmp_path / "sam.json"
    template.write_text('{"Resources": {"F": {"Type": "AWS::Serverless::Function", '
                        '"Properties": {"Runtime": "python2.7"}}}}', encoding="utf-8")
    assert bytecode.main([str(package), str(template)]) == 1
    with zipfile.ZipFile(package) as archive:
        assert archive.namelist() == ["a.py"]
    template.write_text('{"Resources": {"F": {"Type": "AWS::Serverless::Function", '
                        f'"Properties": {{"Runtime": "{bytecode.runtime()}"}}}}}}}}', encoding="utf-8")
    assert bytecode.main([str(package), str(template)]) == 0
