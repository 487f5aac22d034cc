"""Checks packaging/spack/package.py against the project, without Spack.

  check_spack_recipe.py SOURCE_DIR

The recipe is loaded with a small stand-in for Spack's package API (spack.package: the
directives record what they are given; CMakePackage.define and define_from_variant as Spack
writes them), then:
  - it is valid Python and defines class Commsched, a CMakePackage;
  - it depends on mpi, boost, toml11, nlohmann-json and cmake, as CMakeLists.txt finds them;
  - it has a version equal to project(VERSION) in CMakeLists.txt;
  - for every combination of its variants, every -D it passes is an option or cache variable
    of the project (or one CMake, CTest or FindMPI defines), and each variant changes the
    arguments (it maps onto something);
  - every option() of the project and every COMMSCHED_* cache variable is a variant, or listed
    below as one Spack does not expose;
  - its run environment names the library the project builds for the spec's MPI
    (cmake/mpi_flavor.cmake) and the variables the module file sets (cmake/commsched.module.in).
Prints "spack recipe: ok" or the problems, one per line; exit status 1 on any.
"""
import itertools
import os
import re
import sys
import types

# Options that are not variants, and why.
NOT_VARIANTS = {
    "COMMSCHED_WERROR": "warnings as errors: for CI, not for users",
    "COMMSCHED_SMPI": "the SimGrid benchmark tier builds against smpicxx, not the spec's MPI",
    "COMMSCHED_SANITIZE": "developer builds",
    "COMMSCHED_MPI_FLAVOR": "follows ^mpi (mpi_flavor in the recipe)",
}
# -D names the recipe may pass that CMake itself, CTest or FindMPI define.
STANDARD = {"BUILD_TESTING", "CMAKE_INSTALL_LIBDIR", "MPI_C_COMPILER", "MPI_CXX_COMPILER",
            "MPI_Fortran_COMPILER"}

source = sys.argv[1]
problems = []


# --- a stand-in for spack.package ---------------------------------------------------------------
class Recorded:
    versions, variants, depends = [], {}, []


def version(name, **kwargs):
    Recorded.versions.append(name)


def variant(name, default=None, description="", when=None, **kwargs):
    Recorded.variants[name] = {"default": default, "when": when}


def depends_on(spec, type=None, when=None):
    Recorded.depends.append(re.match(r"[A-Za-z0-9_-]+", spec).group(0))


class Value:
    def __init__(self, value):
        self.value = value


class FakeMpi:
    def __init__(self, name):
        self.name, self.mpicc, self.mpicxx, self.mpifc = name, "mpicc", "mpicxx", "mpif90"


class FakeSpec:
    def __init__(self, values, mpi):
        self.variants = {k: Value(v) for k, v in values.items()}
        self.mpi = FakeMpi(mpi)

    def satisfies(self, constraint):
        wanted = re.findall(r"\+(\w+)", constraint)
        return all(w in self.variants and self.variants[w].value is True for w in wanted)

    def __getitem__(self, name):
        assert name == "mpi", name
        return self.mpi


class Prefix(str):
    @property
    def lib(self):
        return os.path.join(self, "lib")


class CMakePackage:
    name = "commsched"

    @staticmethod
    def define(var, value):
        if isinstance(value, bool):
            return f"-D{var}:BOOL={'ON' if value else 'OFF'}"
        return f"-D{var}:STRING={value}"

    def define_from_variant(self, var, variant=None):
        variant = variant or var.lower()
        if variant not in Recorded.variants:
            raise KeyError(f'"{variant}" is not a variant of "commsched"')
        if variant not in self.spec.variants:
            return ""
        return self.define(var, self.spec.variants[variant].value)


class Env:
    def __init__(self):
        self.values = {}

    def set(self, name, value):
        self.values[name] = value


stub = types.ModuleType("spack.package")
stub.__dict__.update(version=version, variant=variant, depends_on=depends_on,
                     CMakePackage=CMakePackage, join_path=os.path.join)
sys.modules["spack"] = types.ModuleType("spack")
sys.modules["spack.package"] = stub

# --- load the recipe -----------------------------------------------------------------------------
recipe_path = os.path.join(source, "packaging", "spack", "package.py")
recipe = open(recipe_path).read()
namespace = {}
try:
    exec(compile(recipe, recipe_path, "exec"), namespace)
except Exception as e:  # a syntax error, or an import the stand-in lacks
    print(f"spack recipe: FAIL: cannot load {recipe_path}: {e!r}")
    sys.exit(1)
pkg_class = namespace.get("Commsched")
if not (isinstance(pkg_class, type) and issubclass(pkg_class, CMakePackage)):
    print("spack recipe: FAIL: no class Commsched(CMakePackage)")
    sys.exit(1)


def read(path):
    return open(os.path.join(source, path)).read()


cmake_texts = []
for root, dirs, files in os.walk(source):
    # examples/ holds projects of their own (users of an installed commsched).
    dirs[:] = [d for d in dirs if not d.startswith((".", "build")) and d != "examples"]
    for f in files:
        if f == "CMakeLists.txt" or f.endswith(".cmake"):
            cmake_texts.append(open(os.path.join(root, f)).read())
cmake = "\n".join(cmake_texts)
options = set(re.findall(r"^\s*option\((\w+)", cmake, re.M))
cache_vars = options | set(re.findall(r"^\s*set\((\w+)\s[^)]*\bCACHE\b", cmake, re.M))
# What a user of the project can set: its options and its own cache variables.
knobs = options | {v for v in cache_vars if v.startswith("COMMSCHED_")}

# Dependencies the project finds.
for dep, found in (("mpi", r"find_package\(MPI\b"), ("boost", r"find_package\(Boost\b"),
                   ("toml11", r"find_package\(toml11\b"), ("cmake", r"cmake_minimum_required"),
                   ("nlohmann-json", r"find_package\(nlohmann_json\b")):
    if re.search(found, cmake) and dep not in Recorded.depends:
        problems.append(f"the project needs {dep} ({found}) but the recipe does not depend on it")

# Version.
project_version = re.search(r"project\(commsched VERSION ([0-9.]+)", read("CMakeLists.txt")).group(1)
if project_version not in Recorded.versions:
    problems.append(f"no version {project_version} (project(VERSION) in CMakeLists.txt); "
                    f"recipe has {Recorded.versions}")


# Every combination of the variants, conditional ones only where their condition holds (the
# recipe declares a variant after those its condition names).
def specs():
    names = list(Recorded.variants)
    found = []
    for values in itertools.product([False, True], repeat=len(names)):
        present = {}
        for name, value in zip(names, values):
            when = Recorded.variants[name]["when"]
            if when is None or FakeSpec(present, "openmpi").satisfies(when):
                present[name] = value
        if present not in found:
            found.append(present)
    return found


def cmake_args(values, mpi="openmpi"):
    pkg = pkg_class.__new__(pkg_class)
    pkg.spec = FakeSpec(values, mpi)
    pkg.prefix = Prefix("/prefix")
    return [a for a in pkg.cmake_args() if a], pkg


seen = {}
for values in specs():
    args, _ = cmake_args(values)
    seen[tuple(sorted(values.items()))] = args
    for a in args:
        m = re.match(r"-D(\w+)(?::\w+)?=", a)
        if not m:
            problems.append(f"not a -D argument: {a}")
        elif m.group(1) not in cache_vars | STANDARD:
            problems.append(f"{a}: {m.group(1)} is no option or cache variable of the project")
for name in Recorded.variants:
    changes = any(
        seen[k] != seen.get(tuple(sorted({**dict(k), name: not dict(k)[name]}.items())))
        for k in seen if name in dict(k))
    if not changes:
        problems.append(f"variant {name} changes no CMake argument")
passed = {re.match(r"-D(\w+)", a).group(1) for args in seen.values() for a in args}
for opt in sorted(knobs):
    if opt not in passed and opt not in NOT_VARIANTS:
        problems.append(f"option {opt} has no variant (or add it to NOT_VARIANTS with a reason)")

# Run environment: the library the project builds for each flavour, the module file's names.
flavor = read("cmake/mpi_flavor.cmake")
lib_of = dict(re.findall(r'STREQUAL "(\w+)"\)\s*set\(_suffix "\w+"\)\s*set\(COMMSCHED_LIB_NAME "(\w+)"\)',
                         flavor))
module = read("cmake/commsched.module.in")
module_vars = set(re.findall(r"^setenv (\w+)", module, re.M))
for mpi, flavour in (("openmpi", "openmpi"), ("mpich", "mpich"), ("mvapich2", "mpich")):
    values = {n: v["default"] for n, v in Recorded.variants.items() if v["when"] is None}
    args, pkg = cmake_args(values, mpi)
    if f"-DCOMMSCHED_MPI_FLAVOR:STRING={flavour}" not in args:
        problems.append(f"^{mpi}: COMMSCHED_MPI_FLAVOR should be {flavour}: {args}")
    env = Env()
    pkg.setup_run_environment(env)
    want = f"/prefix/lib/lib{lib_of.get(flavour, '?')}.so"
    if env.values.get("COMMSCHED_PRELOAD") != want:
        problems.append(f"^{mpi}: COMMSCHED_PRELOAD {env.values.get('COMMSCHED_PRELOAD')}, "
                        f"the project builds {want}")
    if set(env.values) != module_vars:
        problems.append(f"run environment sets {sorted(env.values)}, the module file "
                        f"{sorted(module_vars)}")

print(f"spack recipe: variants {sorted(Recorded.variants)}, {len(seen)} combinations, "
      f"options {sorted(knobs)}")
for p in dict.fromkeys(problems):  # each once, in order
    print("spack recipe: FAIL: " + p)
if not problems:
    print("spack recipe: ok")
sys.exit(1 if problems else 0)
