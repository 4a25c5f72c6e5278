"""The fast paths of a tree check: the walk's listings answer what stat calls answered, the walk
hands out files as it goes, and the pool checks a stream of tasks whose settings table grows."""

from __future__ import annotations

import os

from cudalint.frontend import runner
from cudalint.frontend.config import Overrides, Resolver
from cudalint.frontend.files import Listings, Walker

FINDING = "{ cudaPackages }: cudaPackages.cudatoolkit\n"  # CUDA001


def write(path, text: str = "{ }\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_listings_answer_as_the_file_system_does(tmp_path) -> None:
    write(tmp_path / "real" / "flake.lock")
    (tmp_path / "real" / ".git").mkdir()
    (tmp_path / "real" / "pyproject.toml").mkdir()  # a directory: exists, but not a file
    os.symlink(tmp_path / "real" / "flake.lock", tmp_path / "real" / ".gitignore")  # a link to a file
    os.symlink(tmp_path / "nowhere", tmp_path / "real" / "cudalint.toml")  # broken
    write(tmp_path / "empty" / "a.nix")
    listings = Listings()
    for directory in (tmp_path / "real", tmp_path / "empty"):
        with os.scandir(directory) as entries:
            listings.record(str(directory), list(entries))
    for directory in (tmp_path / "real", tmp_path / "empty", tmp_path):  # tmp_path: not listed
        for name in sorted(Listings.NAMES):
            path = os.path.join(directory, name)
            assert listings.is_file(str(directory), name) == os.path.isfile(path), path
            assert listings.exists(str(directory), name) == os.path.exists(path), path


def test_walking_hands_out_every_found_file_once_in_order(tmp_path) -> None:
    for name in ("b.nix", "a/x.nix", "a/b/y.nix", "c/z.nix", "ignored/w.nix"):
        write(tmp_path / name)
    write(tmp_path / ".gitignore", "ignored/\n")
    walker = Walker()
    walker.add_file(str(tmp_path / "a" / "x.nix"), explicit=True)
    handed = walker.fresh()
    handed += walker.walking(str(tmp_path))
    assert handed == walker.found
    assert sorted(os.path.relpath(f.path, tmp_path) for f in handed) == ["a/b/y.nix", "a/x.nix", "b.nix", "c/z.nix"]
    assert walker.fresh() == []


def test_the_pool_checks_a_stream_whose_settings_table_grows(tmp_path) -> None:
    """Tasks produced lazily, some with settings added to the table after the workers started,
    give the results a serial run gives, in task order."""
    count = runner.PARALLEL_THRESHOLD + runner.BATCH + 8
    # the last files are in a directory whose settings come after the workers started
    directories = [f"d{i % 2}" for i in range(count - 8)] + ["late"] * 8
    for i, directory in enumerate(directories):
        write(tmp_path / directory / f"f{i}.nix", FINDING if i % 4 == 0 else "{ }\n")
    write(tmp_path / "late" / "cudalint.toml", 'ignore = ["CUDA001"]\n')
    resolver = Resolver(Overrides(), cwd=str(tmp_path))

    def stream(table: list):
        for i, directory in enumerate(directories):
            path = str(tmp_path / directory / f"f{i}.nix")
            settings = resolver.settings_for(path)
            if settings not in table:
                table.append(settings)
            yield runner.Task(path, os.path.relpath(path, tmp_path), table.index(settings), False)

    outcomes = {}
    for jobs in (1, 2):
        table: list = []
        outcomes[jobs] = [(task.display, processed.result.path, [d.code for d in processed.result.diagnostics]) for task, processed in runner.run(stream(table), table, runner.CHECK, jobs)]
    assert outcomes[1] == outcomes[2]
    assert [display for display, *_ in outcomes[2]] == [f"{d}/f{i}.nix" for i, d in enumerate(directories)]
    flagged = {display.split("/")[0] for display, _, found in outcomes[2] if "CUDA001" in found}
    assert flagged == {"d0"}  # the late directory's own settings reached the workers
