# Spack recipe for commsched. Use it from a package repository of your own (README "Install
# with Spack"):
#   spack repo create ~/spack-commsched local      # prints the repository's root R
#   mkdir -p R/packages/commsched && cp packaging/spack/package.py R/packages/commsched/
#   spack repo add R
#   spack develop --path $PWD --no-clone commsched@=main && spack install commsched
# The variants map one to one onto the project's CMake options; tests/packaging checks that
# they stay in step with CMakeLists.txt.

from spack.package import *

try:  # Spack v1: the build systems live in the builtin package repository
    from spack_repo.builtin.build_systems.cmake import CMakePackage
except ImportError:  # Spack 0.x: spack.package provides them
    pass


class Commsched(CMakePackage):
    """A library preloaded into MPI programs (LD_PRELOAD, PMPI) that learns the irregular
    patterns of their MPI_Alltoallv calls and Isend/Irecv bursts and runs them with better
    schedules; the program is not recompiled."""

    # Built from a checkout (spack develop) until the project publishes a repository to fetch.
    version("main")
    version("0.1.0")

    variant("tools", default=True,
            description="commsched-run, commsched-info, commsched-analyze, commsched-calibrate")
    variant("otf2", default=False, when="+tools",
            description="commsched-analyze --otf2: traces as OTF2 archives (Vampir, Scalasca)")
    variant("tests", default=False,
            description="Build the unit and MPI tests (ctest in the build directory)")
    variant("fortran", default=True, when="+tests",
            description="Also test the Fortran entry points (mpif.h, mpi_f08)")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("fortran", type="build", when="+tests+fortran")
    depends_on("cmake@3.25:", type="build")
    depends_on("mpi")
    depends_on("boost@1.74:")  # header-only Boost.Container
    depends_on("toml11@3.7:3")  # machine files; find_package(toml11) in src/cost
    depends_on("nlohmann-json@3.9:", type="build")  # header-only: the report and Chrome trace
    depends_on("otf2@3:", when="+otf2")
    depends_on("googletest", type="build", when="+tests")
    depends_on("python@3:", type="build", when="+tests")  # MPI tests read the JSON report
    depends_on("metis@5:", when="+tests")  # halo_exchange and cg_solver (skipped without)

    @property
    def mpi_flavor(self):
        """The project builds for Open MPI's or MPICH's ABI (and Fortran layer)."""
        return "openmpi" if self.spec["mpi"].name == "openmpi" else "mpich"

    @property
    def preload_library(self):
        name = "libcommsched.so" if self.mpi_flavor == "openmpi" else "libcommsched_mpich.so"
        return join_path(self.prefix.lib, name)

    def cmake_args(self):
        mpi = self.spec["mpi"]
        args = [
            self.define("COMMSCHED_MPI_FLAVOR", self.mpi_flavor),
            self.define("CMAKE_INSTALL_LIBDIR", "lib"),  # COMMSCHED_PRELOAD points there
            self.define("MPI_C_COMPILER", mpi.mpicc),
            self.define("MPI_CXX_COMPILER", mpi.mpicxx),
            self.define_from_variant("COMMSCHED_TOOLS", "tools"),
            self.define_from_variant("BUILD_TESTING", "tests"),
        ]
        # AUTO, the project's default, would pick up an OTF2 Spack did not ask for.
        args.append(self.define("COMMSCHED_OTF2", self.spec.satisfies("+otf2")))
        if self.spec.satisfies("+tests"):
            args.append(self.define_from_variant("COMMSCHED_FORTRAN_TESTS", "fortran"))
            if self.spec.satisfies("+fortran"):
                args.append(self.define("MPI_Fortran_COMPILER", mpi.mpifc))
        return args

    def setup_run_environment(self, env):
        # The same variables as the module file the project installs: launch with
        #   mpirun -x LD_PRELOAD=$COMMSCHED_PRELOAD ...
        env.set("COMMSCHED_ROOT", self.prefix)
        env.set("COMMSCHED_PRELOAD", self.preload_library)
