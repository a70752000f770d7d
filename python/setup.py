# setup.py -- the pocketllm wheel: the pure-Python package plus the built
# libpocketllm.so beside it (scripts/build-wheel.sh stages both and runs
# this with Debian's setuptools and wheel, offline).  The wheel is tagged
# py3-none-<platform>: any Python 3 runs the ctypes code, the library
# ties it to the platform it was built for.
import os
import re

from setuptools import setup
from setuptools.dist import Distribution

try:
    from wheel.bdist_wheel import bdist_wheel as _bdist_wheel
except ImportError:  # no wheel module: sdist / develop still work
    _bdist_wheel = None

HERE = os.path.dirname(os.path.abspath(__file__))


def version():
    # the project's version, from the top CMakeLists.txt when it is there
    # (the staging copy gets it in POCKETLLM_VERSION)
    v = os.environ.get("POCKETLLM_VERSION")
    if v:
        return v
    cm = os.path.join(HERE, "..", "CMakeLists.txt")
    with open(cm, encoding="utf-8") as f:
        return re.search(r"project\(pocketllm VERSION ([0-9.]+)", f.read()).group(1)


class BinaryDistribution(Distribution):
    def has_ext_modules(self):  # it carries a shared library: a platform wheel
        return True


cmdclass = {}
if _bdist_wheel is not None:
    class bdist_wheel(_bdist_wheel):
        def get_tag(self):
            _, _, plat = super().get_tag()
            return "py3", "none", plat

    cmdclass["bdist_wheel"] = bdist_wheel

setup(
    name="pocketllm",
    version=version(),
    description="PocketLLM: a large language model on one device -- Python binding over libpocketllm",
    packages=["pocketllm"],
    package_data={"pocketllm": ["libpocketllm.so", "py.typed"]},
    distclass=BinaryDistribution,
    cmdclass=cmdclass,
    python_requires=">=3.8",
    zip_safe=False,
)
