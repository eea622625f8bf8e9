"""Only what pyproject.toml cannot say: meshdbg.pth at the top of site-packages.

Its one line runs at every interpreter start-up, costs one environment lookup, and arms
meshdbg.worker.autostart only where PYTHONBREAKPOINT names meshdbg. Built wheels (`pip install
meshdbg`, `pip install .`) carry it; an editable install builds no tree to carry it in, so
there it is copied by hand (README, "Pause-safe collectives").
"""

import os

from setuptools import setup
from setuptools.command.build_py import build_py

PTH = "meshdbg.pth"
HERE = os.path.dirname(os.path.abspath(__file__))


class BuildPyWithPth(build_py):
    """build_py, plus meshdbg.pth beside the package: the wheel's root, which is site-packages."""

    def run(self) -> None:
        super().run()
        self.copy_file(os.path.join(HERE, PTH), os.path.join(self.build_lib, PTH), preserve_mode=False)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), os.path.join(self.build_lib, PTH)]


setup(cmdclass={"build_py": BuildPyWithPth})
