"""The application tier: real, unmodified MPI programs, natively and with the library preloaded.

  apps/bench/bench.py apps [--machines shm,flat,shallow,two_clusters] [--pairs 3]
                           [--apps lammps,lammps-fine,fftw,hpcc,qe,fft2d,petsc,petsc-neighbor]
                           [--app-ranks 4]
                           [--smoke] [--out FILE]
                           [--preload-env COMMSCHED_STRATEGY=lp_shift,...] [--control barrier]
                           [--beside COMMSCHED_CANDIDATES=native,...]
                           [--fftw-wisdom FILE]

Each application runs natively and with libcommsched.so preloaded with default settings (no
COMMSCHED_* variable but COMMSCHED_REPORT, which only writes the report), A/B interleaved
--pairs times in alternating order (native first in even pairs). A run's time is its whole
wall time, launch to exit; beside it, the program's own breakdown where it prints one. The
ratio of a pair is native / preloaded (above 1: faster preloaded). A preloaded run is correct
when the numbers of its own correctness output equal the native run's of the same pair, and
the program's own checks pass in both. A run that fails, times out or differs makes the tier
exit 1 and shows FAILED.

  lammps  Debian's `lmp`: the bundled peptide example (PPPM, SHAKE, NVT) replicated 2x1x1,
          with `kspace_modify collective yes mesh 32 32 32` (the 3-D FFT remaps call
          MPI_Alltoallv; the mesh makes them most of the step), 200 steps. Correct: every
          thermo row (step, temperature, energies, pressure, 15 digits) and the neighbour
          statistics. Breakdown: the Kspace and Comm rows of LAMMPS' MPI
          task timing (average seconds and share of the loop).
  lammps-fine  the same on a 64^3 mesh (eight times the remaps' bytes; Kspace about 95 % of
          the loop on the emulated cluster).
  qe      Quantum ESPRESSO's pw.x (Debian quantum-espresso, Fortran with mpif.h): an SCF run of
          an 8-atom silicon cell (apps/bench/qe_si8.in, ecutwfc 60 Ry, 54^3 FFT grid, the
          pseudopotential from quantum-espresso-data), whose 3-D FFTs' transposes are
          MPI_Alltoall (2,750 calls at 16 ranks). Correct: the FFT grid, every iteration's
          energy and accuracy, the converged energy and the band edge as printed. Breakdown:
          PWSCF's wall time and its FFT transposes' (fft_scatt_xy and fft_scatt_yz).
  fftw    apps/bench/fftw3d_mpi.c built against FFTW 3's MPI interface (Debian
          libfftw3-mpi-dev): 100 forward and backward 3-D transforms of 64^3 points, whose slab
          transposes are MPI_Alltoall (one per transform, 202 calls). Its FFTW_MEASURE plan is
          measured once per machine by an untimed native run and read from that wisdom by
          every timed run (or given: --fftw-wisdom FILE). Correct: its checksum and round-trip
          residual. Breakdown: the transforms' own time.
  hpcc    Debian's `hpcc` with tests/apps/hpccinf.txt at N = 1000 (HPCC runs all its tests).
          Correct: its residuals and error counts; beyond 4 ranks RandomAccess's missed updates
          depend on timing (natively too), so they are held to HPCC's own limit (under 1 %)
          instead. Breakdown: MPIFFT Gflop/s, PTRANS GB/s.
  fft2d   tests/apps/fft2d_transpose.f90 (Fortran MPI_ALLTOALLV), built in the build tree.
          Correct: its checksum against its serial reference.
  petsc   apps/bench/petsc_ksp.c built against Debian's PETSc (petsc-dev) with Open MPI's mpicc
          once per point: CG with Jacobi, 800 iterations (never converged), on the 5-point
          Laplacian of a 1000 x 1000 grid whose points are renumbered tile by tile (random tile
          sizes, shuffled tiles, fixed seed), in contiguous row blocks: every rank's ghost
          exchange reaches every other rank, with uneven sizes, as on a partitioned unstructured
          mesh. `-exchange alltoallv`: the operator is MPIAIJ's own product with its ghosts
          fetched by one MPI_Alltoallv per product. (PETSc's `-sf_type alltoall` serves only
          PetscSFSetGraphWithPattern graphs, one unit to every rank; on MatMult's graph it moves
          the wrong data, so the program refuses it.) Correct: the grid and exchange-shape lines
          and the checksum (iterations, 2-norm and sum of the solution, final residual, 15
          digits), the same for every exchange. Breakdown: the solve's own time.
  petsc-neighbor  the same with PETSc's own MatMult on `-sf_type neighbor` (PetscSF over
          MPI_Ineighbor_alltoallv, the nonblocking neighbourhood collective).

--predict MACHINE_FILE (issue 27, item 2): before the pairs, one untimed run traced
(COMMSCHED_TRACE with COMMSCHED_TRIAL=0: every pattern learned at once; under
COMMSCHED_STRATEGY=native nothing is learned, so its trace holds no pattern) and
commsched-analyze's what-if on it with that machine file: per pattern, the predicted time per
call of native and of the best strategy; their difference times the calls is the predicted
saving, set beside the measured one. --pairs 0: the predictions only.

--preload-env VAR=VALUE,...: the preloaded runs get these COMMSCHED_* settings instead of the
defaults (a forced strategy, a budget), recorded in every line as "preload_env"; the pairs and
the correctness checks are as above.

--beside VAR=VALUE,...: a third run in every pair, preloaded with these COMMSCHED_* settings
instead of --preload-env's, its ratio against the same pair's native run reported beside (a
setting that isolates one part of the library, such as COMMSCHED_CANDIDATES=native: learn,
try nothing). The three runs of pair i rotate (native, preloaded, beside, starting i places
in), so over every three pairs each takes each place once and a host whose speed drifts
touches all three alike.

--control barrier: the "preloaded" runs preload apps/bench/barrier_preload.c (built with Open
MPI's mpicc into the build tree) instead of the library: MPI's own MPI_Alltoall and
MPI_Alltoallv, each after an MPI_Barrier on its communicator. What lining the ranks up before
each call gains, set beside what the library gains; such runs write no report.

--smoke: one pair, fft2d if built else fftw, small sizes (the CI point). An application that
is not installed or not built prints one SKIPPED line; with --smoke and none available the
tier prints SKIPPED and exits 0.
"""
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from harness import NETNS_CONFIGS, git_commit

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MACHINES = ["shm", "flat", "shallow", "two_clusters"]
LAMMPS_EXAMPLE = "/usr/share/doc/lammps-examples/examples/peptide"


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def mpicc():
    """Open MPI's C compiler wrapper, which Debian's FFTW and PETSc MPI builds use (not
    another MPI's); None when absent."""
    return shutil.which("mpicc.openmpi") or shutil.which("mpicc")


def fresh(out, src):
    """Whether `out` exists and is newer than `src`."""
    return os.path.exists(out) and os.path.getmtime(out) >= os.path.getmtime(src)


def build_c(src, out, flags):
    """Builds `src` into `out` with mpicc and `flags` unless `out` is fresh; None, or why not."""
    if fresh(out, src):
        return None
    cc = mpicc()
    if not cc:
        return "no mpicc"
    os.makedirs(os.path.dirname(out), exist_ok=True)
    p = subprocess.run([cc, "-O2", "-o", out, src] + flags, capture_output=True, text=True)
    return None if p.returncode == 0 else \
        f"cannot build {os.path.basename(out)}: {p.stderr[-300:]}"


def control_library(a):
    """The library the "preloaded" runs get: libcommsched.so, or with --control barrier the
    control built from apps/bench/barrier_preload.c (None and the reason when it cannot be
    built)."""
    if not a.control:
        return os.path.join(a.build, "wrappers", "libcommsched.so"), None
    lib = os.path.join(os.path.abspath(a.build), "apps", "bench", "libbarrier_preload.so")
    why = build_c(os.path.join(HERE, "barrier_preload.c"), lib, ["-shared", "-fPIC"])
    return (None, why) if why else (lib, None)


class Lammps:
    name = "lammps"
    # PPPM's mesh: the example's accuracy picks one of a few thousand points, whose remaps move
    # a few KiB and take a small share of the step; at 32^3 the 3-D FFTs are most of it.
    MESH = 32

    def __init__(self, smoke):
        self.steps = 20 if smoke else 200

    def missing(self, build):
        if not shutil.which("lmp"):
            return "no `lmp` (Debian package lammps)"
        if not os.path.exists(os.path.join(LAMMPS_EXAMPLE, "in.peptide")):
            return f"no {LAMMPS_EXAMPLE} (Debian package lammps-examples)"
        return None

    def prepare(self, work, build, ranks):
        shutil.copy(os.path.join(LAMMPS_EXAMPLE, "data.peptide"), work)
        m = self.MESH
        text = read(os.path.join(LAMMPS_EXAMPLE, "in.peptide"))
        text = re.sub(r"^(kspace_style.*)$", rf"\1\nkspace_modify\tcollective yes mesh {m} {m} {m}",
                      text, flags=re.M)
        text = re.sub(r"^(read_data.*)$", r"\1\nreplicate\t2 1 1", text, flags=re.M)
        text = re.sub(r"^run\s.*$", f"run\t\t{self.steps}", text, flags=re.M)
        text = re.sub(r"^thermo_style.*$", "thermo_style\tcustom step temp epair emol etotal press",
                      text, flags=re.M)
        text = re.sub(r"^thermo\s.*$", "thermo\t\t20\nthermo_modify\tformat float %.15g", text,
                      flags=re.M)
        if "collective yes" not in text or "replicate" not in text:
            raise RuntimeError("could not edit in.peptide")
        with open(os.path.join(work, "in.bench"), "w") as f:
            f.write(text)
        return [shutil.which("lmp"), "-in", "in.bench", "-log", "none"]

    def parse(self, work, stdout):
        numbers = [ln.strip() for ln in stdout.splitlines()
                   if re.match(r"^\s+\d+ [-\d.e+ ]+$", ln)
                   or re.match(r"^(Total # of neighbors|Ave neighs/atom|Neighbor list builds|"
                               r"Dangerous builds)", ln)]
        m = re.search(r"^Loop time of ([\d.eE+-]+)", stdout, re.M)
        own = {}
        if m:
            own["loop_s"] = float(m.group(1))
        for sect in ("Kspace", "Comm", "Pair"):
            r = re.search(rf"^{sect}\s*\|\s*[\d.eE+-]+\s*\|\s*([\d.eE+-]+)\s*\|.*\|\s*([\d.]+)\s*$",
                          stdout, re.M)
            if r:
                own[sect.lower() + "_s"] = float(r.group(1))
                own[sect.lower() + "_pct"] = float(r.group(2))
        ok = bool(m) and "Total wall time" in stdout and len(numbers) >= 3
        return numbers, ok, own

    @staticmethod
    def comm_share(own):
        if "kspace_pct" in own and "comm_pct" in own:
            return (f"Kspace {own['kspace_pct']:.0f} % + Comm {own['comm_pct']:.0f} % "
                    f"of the loop")
        return "–"


class LammpsFine(Lammps):
    name = "lammps-fine"
    MESH = 64


class Fftw:
    name = "fftw"

    def __init__(self, smoke, wisdom=None):
        self.n, self.reps = (32, 20) if smoke else (64, 100)
        self.given = wisdom
        self.wisdom = None

    def setup(self, root, launch, env, build, timeout):
        """FFTW_MEASURE's plan differs from run to run: measure it natively, untimed, and
        write it as wisdom; every timed run then plans from that wisdom and runs the same
        transposes. FFTW measures MPI_Alltoall against MPI_Sendrecv pairs and picks either on
        this machine, from run to run: measure again (10 times at most) until the plan's
        transposes are MPI_Alltoall, the path this point is about (within 10 minutes: on the
        emulated cluster one measurement takes 1 to 3). With --fftw-wisdom FILE, the wisdom
        is read from FILE where it exists, and otherwise measured and kept there once its
        transposes are MPI_Alltoall, so that later points run the same plan."""
        self.wisdom = os.path.join(root, "fftw.wisdom")
        if self.given and os.path.exists(self.given):
            shutil.copyfile(self.given, self.wisdom)
            return
        work = os.path.join(root, "wisdom")
        os.makedirs(work, exist_ok=True)
        t0 = time.monotonic()
        for _ in range(10):
            if time.monotonic() - t0 > 600:
                break
            if os.path.exists(self.wisdom):
                os.remove(self.wisdom)
            # One measurement alone may take minutes: never less than 5 of them.
            p = subprocess.run(launch + ["--wdir", work, self.binary(build), str(self.n), "1",
                                         self.wisdom], env=env, capture_output=True, text=True,
                               timeout=max(timeout, 300))
            if p.returncode != 0 or not os.path.exists(self.wisdom):
                raise RuntimeError(f"fftw wisdom run: exit status {p.returncode}: "
                                   f"{p.stderr[-200:]}")
            if "transposes=alltoall" in p.stdout:
                if self.given:
                    shutil.copyfile(self.wisdom, self.given)
                break

    def binary(self, build):
        return os.path.join(build, "apps", "bench", "fftw3d_mpi")

    def missing(self, build):
        src, exe = os.path.join(HERE, "fftw3d_mpi.c"), self.binary(build)
        if not fresh(exe, src) and not os.path.exists("/usr/include/fftw3-mpi.h"):
            return "no FFTW 3 MPI headers (Debian package libfftw3-mpi-dev)"
        return build_c(src, exe, ["-lfftw3_mpi", "-lfftw3", "-lm"])

    def prepare(self, work, build, ranks):
        return [self.binary(build), str(self.n), str(self.reps), self.wisdom]

    def parse(self, work, stdout):
        numbers = [ln for ln in stdout.splitlines() if ln.startswith("fftw3d residual=")]
        m = re.search(r"transforms_s=([\d.]+)", stdout)
        own = {"transforms_s": float(m.group(1))} if m else {}
        t = re.search(r"transposes=(\w+)", stdout)
        if t:
            own["transposes"] = t.group(1)
        return numbers, bool(m) and "fftw3d ok" in stdout and len(numbers) == 1, own

    @staticmethod
    def comm_share(own):
        if "transforms_s" not in own:
            return "–"
        return f"transforms {own['transforms_s']:.2f} s ({own.get('transposes', '?')} transposes)"


class Hpcc:
    name = "hpcc"
    N = 1000

    def __init__(self, smoke):
        self.n = 400 if smoke else self.N
        self.ranks = 0  # set by prepare: parse reads the run's rank count

    def missing(self, build):
        return None if shutil.which("hpcc") else "no `hpcc` (Debian package hpcc)"

    def prepare(self, work, build, ranks):
        text = read(os.path.join(REPO, "tests", "apps", "hpccinf.txt"))
        lines = text.splitlines(keepends=True)
        if not lines[5].split()[0].isdigit() or "Ns" not in lines[5]:
            raise RuntimeError("unexpected hpccinf.txt")
        lines[5] = f"{self.n:<13d}Ns\n"
        p = max(1, int(ranks ** 0.5))
        while ranks % p:
            p -= 1
        self.ranks = ranks
        lines[10] = f"{p:<13d}Ps\n"
        lines[11] = f"{ranks // p:<13d}Qs\n"
        with open(os.path.join(work, "hpccinf.txt"), "w") as f:
            f.writelines(lines)
        return [shutil.which("hpcc")]

    # HPCC's MPIRandomAccess posts 4 receives from MPI_ANY_SOURCE beyond 4 ranks and takes
    # them with MPI_Testany; a sender's "finished" message can be taken before its last update
    # that another receive already holds, which is then cancelled unread. Its rules allow such
    # missed updates (under 1 % of the table, "(passed)"), so beyond 4 ranks the error counts
    # depend on timing, natively too: checked against HPCC's own limit, not against native's.
    RACY_ABOVE_RANKS = 4
    RANDOM_ACCESS_KEYS = ("MPIRandomAccess_Errors", "MPIRandomAccess_LCG_Errors")

    def parse(self, work, stdout):
        out = read(os.path.join(work, "hpccoutf.txt"))
        racy = self.ranks > self.RACY_ABOVE_RANKS
        keys = ("PTRANS_residual", "MPIFFT_maxErr", "MPIFFT_N", "HPL_N") + \
            (() if racy else self.RANDOM_ACCESS_KEYS)
        numbers = [ln for ln in out.splitlines() if ln.split("=")[0] in keys]
        numbers += [re.sub(r"[\d.]+ s$", "", ln) for ln in out.splitlines()
                    if re.match(r"^\|\|Ax-b\|\|_oo", ln)]
        own = {}
        for k in ("MPIFFT_Gflops", "PTRANS_GBs", "HPL_Tflops") + \
                (self.RANDOM_ACCESS_KEYS if racy else ()):
            m = re.search(rf"^{k}=([\d.eE+-]+)", out, re.M)
            if m:
                own[k] = float(m.group(1))
        if racy:
            fractions = re.findall(r"^MPIRandomAccess(?:_LCG)?_ErrorsFraction=([\d.eE+-]+)$",
                                   out, re.M)
            random_access_ok = len(fractions) == 2 and all(float(f) < 0.01 for f in fractions)
        else:
            random_access_ok = "MPIRandomAccess_Errors=0" in out
        ok = ("End of Summary section" in out and "FAILED" not in out
              and "PTRANS_residual=0" in out and random_access_ok)
        return numbers, ok, own

    @staticmethod
    def comm_share(own):
        if "MPIFFT_Gflops" in own:
            missed = (f", RandomAccess missed {own['MPIRandomAccess_Errors']:.0f} updates"
                      if "MPIRandomAccess_Errors" in own else "")
            return (f"MPIFFT {own['MPIFFT_Gflops']:.3g} Gflop/s, "
                    f"PTRANS {own.get('PTRANS_GBs', 0):.3g} GB/s{missed}")
        return "–"


class Fft2d:
    name = "fft2d"

    def __init__(self, smoke):
        # steps fields n1 n2: every transpose pattern repeats `fields` times in a row
        self.args = ["3", "4", "50", "36"] if smoke else ["20", "8", "128", "96"]

    def binary(self, build):
        return os.path.join(build, "tests", "apps", "fft2d_transpose")

    def missing(self, build):
        exe = self.binary(build)
        if os.path.exists(exe):
            return None
        p = subprocess.run(["cmake", "--build", build, "--target", "fft2d_transpose"],
                           capture_output=True, text=True)
        if p.returncode == 0 and os.path.exists(exe):
            return None
        return "fft2d_transpose not built (needs MPI Fortran in the build tree)"

    def prepare(self, work, build, ranks):
        return [self.binary(build)] + self.args

    def parse(self, work, stdout):
        numbers = [ln for ln in stdout.splitlines() if ln.startswith("fft2d")]
        # Its own timing, slowest rank: the time steps and the MPI_ALLTOALLV calls in them.
        m = re.search(r"steps_s=([\d.]+) transposes_s=([\d.]+)", stdout)
        own = {"steps_s": float(m.group(1)), "transposes_s": float(m.group(2))} if m else {}
        return numbers, "fft2d ok" in numbers, own

    @staticmethod
    def comm_share(own):
        if "steps_s" not in own:
            return "–"
        return f"steps {own['steps_s']:.2f} s, transposes {own['transposes_s']:.2f} s"


class Qe:
    name = "qe"
    INPUT = os.path.join(HERE, "qe_si8.in")
    PSEUDO = "/usr/share/espresso/pseudo/Si.pz-vbc.UPF"

    def __init__(self, smoke):
        self.smoke = smoke

    def missing(self, build):
        if not shutil.which("pw.x"):
            return "no `pw.x` (Debian package quantum-espresso)"
        if not os.path.exists(self.PSEUDO):
            return f"no {self.PSEUDO} (Debian package quantum-espresso-data)"
        return None

    def prepare(self, work, build, ranks):
        text = read(self.INPUT)
        if self.smoke:
            text = text.replace("ecutwfc = 60.0", "ecutwfc = 20.0")
        with open(os.path.join(work, "si8.in"), "w") as f:
            f.write(text)
        return [shutil.which("pw.x"), "-in", "si8.in"]

    def parse(self, work, stdout):
        # The FFT grid, every SCF iteration's energy and accuracy, the converged energy and
        # the band edge, as printed (fixed digits).
        numbers = [ln.strip() for ln in stdout.splitlines()
                   if re.match(r"^(!?\s+total energy|\s+estimated scf accuracy|\s+highest "
                               r"occupied|\s+convergence has been achieved|\s+Dense\s+grid)",
                               ln)]
        own = {}
        for key, name in (("PWSCF", "pwscf_s"), ("fft_scatt_yz", "scatter_yz_s"),
                          ("fft_scatt_xy", "scatter_xy_s")):
            # "12.34s WALL", from a minute on "1m 2.34s WALL", from an hour "1h 2m WALL"
            m = re.search(rf"^\s+{key}\s*:.*CPU\s+(?:(\d+)h\s*)?(?:(\d+)m\s*)?(?:([\d.]+)s)?"
                          r"\s*WALL", stdout, re.M)
            if m:
                h, mi, sec = (float(g) if g else 0.0 for g in m.groups())
                own[name] = 3600 * h + 60 * mi + sec
        ok = "convergence has been achieved" in stdout and "JOB DONE" in stdout
        return numbers, ok and len(numbers) >= 4, own

    @staticmethod
    def comm_share(own):
        if "pwscf_s" not in own:
            return "–"
        return (f"run {own['pwscf_s']:.1f} s, of it FFT transposes "
                f"{own.get('scatter_yz_s', 0) + own.get('scatter_xy_s', 0):.1f} s")


class Petsc:
    name = "petsc"
    # Sized for 20 to 40 s at 16 ranks on the emulated cluster: about 100 KiB of ghosts per
    # rank and product over 100 Mbit/s links, 16 ranks sharing the host's cores.
    N, ITERATIONS = 1000, 800
    OPTIONS = ["-exchange", "alltoallv"]

    def __init__(self, smoke):
        self.n, self.its = (200, 100) if smoke else (self.N, self.ITERATIONS)
        self.exe = None

    @staticmethod
    def flags():
        p = subprocess.run(["pkg-config", "--cflags", "--libs", "PETSc"], capture_output=True,
                           text=True)
        return p.stdout.split() if p.returncode == 0 else None

    def missing(self, build):
        if not shutil.which("pkg-config"):
            return "no pkg-config"
        flags = self.flags()
        if flags is None:
            return "no PETSc pkg-config file (Debian package petsc-dev)"
        inc = [f[2:] for f in flags if f.startswith("-I")] + ["/usr/include"]
        if not any(os.path.exists(os.path.join(d, "petscksp.h")) for d in inc):
            return "no PETSc headers (Debian package petsc-dev)"
        if not mpicc():
            return "no mpicc"
        return None

    def setup(self, root, launch, env, build, timeout):
        """Build petsc_ksp.c once per point, in the point's directory: native and preloaded
        runs start the same binary (outside the build tree, as PETSc is optional)."""
        self.exe = os.path.join(root, "petsc_ksp")
        p = subprocess.run([mpicc(), "-O2", "-o", self.exe,
                            os.path.join(HERE, "petsc_ksp.c")] + self.flags(),
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"cannot build petsc_ksp: {p.stderr[-300:]}")

    def prepare(self, work, build, ranks):
        return [self.exe, "-n", str(self.n), "-its", str(self.its)] + self.OPTIONS

    def parse(self, work, stdout):
        # grid, exchange shape and checksum; not the timing line (exchange=... solve_s=...)
        numbers = [ln for ln in stdout.splitlines()
                   if ln.startswith("petsc_ksp ") and "solve_s=" not in ln
                   and ln != "petsc_ksp ok"]
        m = re.search(r"exchange=(\S+) sf_type=(\S+) solve_s=([\d.]+) per_iteration_ms=([\d.]+)",
                      stdout)
        own = {}
        if m:
            own = {"exchange": m.group(1) if m.group(1) != "sf" else f"sf {m.group(2)}",
                   "solve_s": float(m.group(3)), "per_iteration_ms": float(m.group(4))}
        ok = (bool(m) and "petsc_ksp ok" in stdout.splitlines()
              and any(ln.startswith("petsc_ksp checksum ") for ln in numbers))
        return numbers, ok, own

    @staticmethod
    def comm_share(own):
        if "solve_s" not in own:
            return "–"
        return (f"solve {own['solve_s']:.2f} s ({own['per_iteration_ms']:.1f} ms per iteration, "
                f"{own.get('exchange', '?')} exchange)")


class PetscNeighbor(Petsc):
    name = "petsc-neighbor"
    OPTIONS = ["-exchange", "sf", "-sf_type", "neighbor"]


APPS = {"lammps": Lammps, "lammps-fine": LammpsFine, "fftw": Fftw, "hpcc": Hpcc, "qe": Qe,
        "fft2d": Fft2d, "petsc": Petsc, "petsc-neighbor": PetscNeighbor}
# Without --apps: all but lammps-fine, whose runs take minutes each on the emulated cluster.
DEFAULT_APPS = [name for name in APPS if name != "lammps-fine"]


def new_app(name, a):
    """Application `name` as the command line asks for it."""
    if name == "fftw":
        return Fftw(a.smoke, a.fftw_wisdom)
    return APPS[name](a.smoke)


def one_run(app, launch, env, work, build, n, timeout):
    """One run in its own directory: wall time, the numbers to compare, the breakdown."""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.chmod(work, 0o755)
    argv = app.prepare(work, build, n)
    t0 = time.monotonic()
    try:
        p = subprocess.run(launch + argv, env=env, cwd=work, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"timed out after {timeout} s")
    wall = time.monotonic() - t0
    with open(os.path.join(work, "stdout.txt"), "w") as f:
        f.write(p.stdout)
    with open(os.path.join(work, "stderr.txt"), "w") as f:
        f.write(p.stderr)
    if p.returncode != 0:
        last = [ln for ln in p.stderr.splitlines() if ln.strip()][-1:] or [""]
        raise RuntimeError(f"exit status {p.returncode}: {last[0][:160]}")
    numbers, ok, own = app.parse(work, p.stdout)
    if not ok:
        raise RuntimeError(f"{app.name}'s own checks did not pass (see {work})")
    return wall, numbers, own


def summarize_report(path):
    try:
        with open(path) as f:
            rep = json.load(f)
    except (OSError, ValueError):
        return None
    pats = rep.get("patterns", [])
    return {
        "patterns": [{k: p.get(k) for k in ("comm", "pattern", "comm_size", "nonzeros", "bytes",
                                            "strategy", "calls", "calls_optimised",
                                            "time_native_s", "time_optimised_s", "trial_s",
                                            "phase_schedule")}
                     | {"tried": [[c.get("strategy"), c.get("measured_s")]
                                  for c in p.get("candidates", [])
                                  if c.get("measured_s") is not None and c["measured_s"] >= 0]}
                     for p in pats],
        "strategies": sorted({p["strategy"] for p in pats}),
        "calls": sum(p.get("calls", 0) for p in pats) + (rep.get("unlearned_calls") or 0),
        "calls_optimised": sum(p.get("calls_optimised", 0) for p in pats),
        "unlearned_calls": rep.get("unlearned_calls"),
        "net_gain_s": sum(p.get("net_gain_s", 0) for p in pats),
        "in_step": rep.get("in_step"),
    }


def preload_env(a, option="preload_env"):
    """--preload-env (or --beside) as a list of VAR=VALUE, each a COMMSCHED_* variable other
    than the report's (which the tier sets itself)."""
    if not getattr(a, option, None):
        return []
    out = []
    for item in getattr(a, option).split(","):
        var, eq, _ = item.partition("=")
        if not eq or not var.startswith("COMMSCHED_") or var == "COMMSCHED_REPORT":
            sys.exit(f"apps: --{option.replace('_', '-')} takes COMMSCHED_VAR=VALUE items, "
                     f"not '{item}'")
        out.append(item)
    return out


def app_point(machine, launch, n, name, a, lib, out, log):
    """Every pair of one application on one machine; the records and the summary."""
    app = new_app(name, a)
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("COMMSCHED_") and k != "LD_PRELOAD"}
    root = tempfile.mkdtemp(prefix=f"cs-apps-{name}-")
    os.chmod(root, 0o755)
    settings = preload_env(a)
    beside = preload_env(a, "beside")
    control = a.control
    summary = {"tier": "apps", "record": "summary", "machine": machine, "app": name, "ranks": n,
               "pairs": a.pairs, "preload_env": settings, "commit": git_commit(),
               "date": datetime.datetime.now().isoformat(timespec="seconds")}
    if beside:
        summary["beside_env"] = beside
    natives, preloads, ratios, reports, owns = [], [], [], [], {"native": [], "preloaded": []}
    besides, beside_ratios = [], []
    failed = None
    try:
        if hasattr(app, "setup"):
            app.setup(root, launch, base, a.build, a.timeout)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        failed = str(e)
    for i in range(0 if failed else a.pairs):
        report = os.path.join(root, f"report{i}.json")
        beside_report = os.path.join(root, f"beside_report{i}.json")
        runs_env = {"preloaded": (report, settings), "beside": (beside_report, beside)}
        if beside:
            kinds = ["native", "preloaded", "beside"]
            order = kinds[i % 3:] + kinds[:i % 3]
        else:
            order = ["native", "preloaded"] if i % 2 == 0 else ["preloaded", "native"]
        res = {}
        for kind in order:
            work = os.path.join(root, f"{kind}{i}")
            # Open MPI's -x sets the variables in every rank, on every node, not in mpirun.
            la = launch + ["--wdir", work]
            if kind != "native":
                kind_report, kind_env = runs_env[kind]
                la += ["-x", f"LD_PRELOAD={lib}", "-x", f"COMMSCHED_REPORT={kind_report}"]
                for var in kind_env:
                    la += ["-x", var]
            try:
                res[kind] = one_run(app, la, base, work, a.build, n, a.timeout)
            except (RuntimeError, OSError) as e:
                failed = f"{kind} run of pair {i + 1}: {e}"
                break
        if failed:
            break
        rec = {"tier": "apps", "record": "pair", "machine": machine, "app": name, "ranks": n,
               "pair": i, "preload_env": settings, "first": order[0], "native_s": res["native"][0],
               "preloaded_s": res["preloaded"][0], "native_own": res["native"][2],
               "preloaded_own": res["preloaded"][2],
               "ratio": res["native"][0] / res["preloaded"][0],
               "correct": res["native"][1] == res["preloaded"][1],
               "report": summarize_report(report)}
        if beside:
            rec.update(order=order, beside_env=beside, beside_s=res["beside"][0],
                       beside_own=res["beside"][2],
                       beside_ratio=res["native"][0] / res["beside"][0],
                       beside_correct=res["native"][1] == res["beside"][1],
                       beside_report=summarize_report(beside_report))
        if control:
            rec["control"] = control
        out.write(json.dumps(rec) + "\n")
        out.flush()
        if (rec["report"] is None or (beside and rec["beside_report"] is None)) and not control:
            failed = f"pair {i + 1}: a preloaded run wrote no report (library not loaded?)"
            break
        for kind, same in (("preloaded", rec["correct"]),
                           ("beside", rec.get("beside_correct", True))):
            if not same:
                diff = [f"{x!r} != {y!r}" for x, y in zip(res["native"][1], res[kind][1])
                        if x != y][:2]
                failed = (f"pair {i + 1}: {kind} output differs from native "
                          f"({len(res['native'][1])} vs {len(res[kind][1])} lines; "
                          f"{'; '.join(diff)})")
                break
        if failed:
            break
        if beside:
            besides.append(rec["beside_s"])
            beside_ratios.append(rec["beside_ratio"])
        natives.append(rec["native_s"])
        preloads.append(rec["preloaded_s"])
        ratios.append(rec["ratio"])
        reports.append(rec["report"])
        owns["native"].append(rec["native_own"])
        owns["preloaded"].append(rec["preloaded_own"])
        log(f"[apps] {machine} {name} pair {i + 1}/{a.pairs}: native {rec['native_s']:.2f} s, "
            f"preloaded {rec['preloaded_s']:.2f} s, ratio {rec['ratio']:.3f}, "
            f"{len(res['native'][1])} output lines identical" +
            (f"; beside {rec['beside_s']:.2f} s, ratio {rec['beside_ratio']:.3f}" if beside
             else ""))
    if failed:
        summary.update(failed=failed, correct=False, workdir=root)
        log(f"[apps] {machine} {name}: FAILED: {failed}")
    else:
        mid = sorted(range(len(ratios)), key=lambda k: ratios[k])[len(ratios) // 2]
        rep = reports[mid] or {}
        own_med = {}
        for kind in ("native", "preloaded"):
            keys = set().union(*(o.keys() for o in owns[kind]))
            own_med[kind] = {k: (statistics.median(o[k] for o in owns[kind] if k in o)
                                 if all(isinstance(o.get(k, 0), (int, float)) for o in owns[kind])
                                 else next(o[k] for o in owns[kind] if k in o))
                             for k in sorted(keys)}
        summary.update(
            native_s=statistics.median(natives), preloaded_s=statistics.median(preloads),
            ratio_median=statistics.median(ratios), ratio_min=min(ratios),
            ratio_max=max(ratios), ratios=ratios,
            strategies=rep.get("strategies", []), patterns=rep.get("patterns", []),
            calls=rep.get("calls"), calls_optimised=rep.get("calls_optimised"),
            unlearned_calls=rep.get("unlearned_calls"), own=own_med,
            comm_share=app.comm_share(own_med["native"]), correct=True)
        if beside:
            summary.update(beside_s=statistics.median(besides),
                           beside_ratio_median=statistics.median(beside_ratios),
                           beside_ratio_min=min(beside_ratios),
                           beside_ratio_max=max(beside_ratios), beside_ratios=beside_ratios)
        shutil.rmtree(root, ignore_errors=True)
    if control:
        summary["control"] = control
    out.write(json.dumps(summary) + "\n")
    out.flush()
    return summary


def analyze(analyzer, trace, machine_file, prefix):
    """commsched-analyze's what-if on a trace: per pattern its calls, the measured time per
    call, and the predicted time per call of native and of the best strategy (with the
    library's per-call agreement, what auto ranks by)."""
    p = subprocess.run([analyzer, trace, "--machine", machine_file, "--csv", prefix],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"commsched-analyze: exit status {p.returncode}: {p.stderr[-200:]}")
    pats = {}
    for block in re.split(r"\n(?=P\d+ )", "\n" + p.stdout):
        m = re.match(r"\s*(P\d+)\s+comm (\S+), (\d+) ranks", block)
        c = re.search(r"strategy (\S+) .*?: (\d+) calls, (\d+) optimised; per call: native "
                      r"(\S+ \S+|-), optimised (\S+ \S+|-)", block)
        if m and c:
            pats[m.group(1)] = {"comm": m.group(2), "ranks": int(m.group(3)),
                                "ran": c.group(1), "calls": int(c.group(2))}
    rows = [ln.split(",") for ln in read(prefix + "-whatif.csv").splitlines()[1:]]
    for r in rows:
        pat, strategy, ok, per_call = r[0], r[2], r[3] == "1", float(r[5])
        if pat not in pats or not ok:
            continue
        q = pats[pat]
        if strategy == "native":
            q["native_pred_s"] = per_call
        elif per_call < q.get("best_pred_s", float("inf")):
            q["best_pred_s"], q["best"] = per_call, strategy
    out = [q for q in pats.values() if "native_pred_s" in q and "best_pred_s" in q]
    saving = sum(q["calls"] * max(0.0, q["native_pred_s"] - q["best_pred_s"]) for q in out)
    return {"patterns": out, "predicted_saving_s": saving}


def predict_point(machine, launch, n, name, a, out, log):
    """One untimed run traced (COMMSCHED_TRACE; COMMSCHED_TRIAL=0, so that every pattern is
    learned at once and recorded: under COMMSCHED_STRATEGY=native nothing is learned), then
    commsched-analyze's prediction of what the best strategy per pattern would save."""
    app = new_app(name, a)
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("COMMSCHED_") and k != "LD_PRELOAD"}
    root = tempfile.mkdtemp(prefix=f"cs-apps-trace-{name}-")
    os.chmod(root, 0o755)
    lib = os.path.join(a.build, "wrappers", "libcommsched.so")
    trace = os.path.join(root, "trace")
    rec = {"tier": "apps", "record": "prediction", "machine": machine, "app": name, "ranks": n,
           "machine_file": a.predict, "commit": git_commit(),
           "date": datetime.datetime.now().isoformat(timespec="seconds")}
    try:
        if hasattr(app, "setup"):
            app.setup(root, launch, base, a.build, a.timeout)
        la = launch + ["--wdir", os.path.join(root, "run"), "-x", f"LD_PRELOAD={lib}",
                       "-x", f"COMMSCHED_TRACE={trace}", "-x", "COMMSCHED_TRIAL=0"]
        one_run(app, la, base, os.path.join(root, "run"), a.build, n, a.timeout)
        analyzer = os.path.join(a.build, "apps", "commsched-analyze")
        rec.update(analyze(analyzer, trace, a.predict, os.path.join(root, "an")))
        shutil.rmtree(root, ignore_errors=True)
        log(f"[apps] {machine} {name}: predicted saving {rec['predicted_saving_s']:.3g} s over "
            f"{len(rec['patterns'])} patterns ({a.predict})")
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        rec["failed"] = f"prediction: {e}"
        log(f"[apps] {machine} {name}: FAILED: {rec['failed']}")
    out.write(json.dumps(rec) + "\n")
    out.flush()
    return rec


def chosen(r):
    """What the library did, in words: the strategies of its learned patterns."""
    if r.get("control"):
        return f"control: {r['control']} before each call, MPI's own call"
    if not r.get("patterns"):
        return f"none learned ({r.get('unlearned_calls') or 0} calls native)"
    step = r.get("in_step") or {}
    total = sum(step.get(k, 0) for k in ("synced", "unsynced", "short_calls", "lossless"))
    synced = (f"; in step on {step['synced']} of {total} rank-communicators"
              if step.get("mode", "off") != "off" else "")
    return (", ".join(r["strategies"]) +
            f" ({len(r['patterns'])} patterns, {r['calls_optimised']}/{r['calls']} calls "
            f"optimised{synced})")


def ratio_cell(r, side=""):
    """A table's ratio cell for a summary's preloaded run (or, side "beside_", its third run):
    the median in bold, then the range."""
    return (f"**{r[side + 'ratio_median']:.3f}** "
            f"({r[side + 'ratio_min']:.3f}–{r[side + 'ratio_max']:.3f})")


def table(rows):
    lines = ["| app | machine | ranks | native s | preloaded s | ratio median (min–max) | "
             "chosen | program's own breakdown (native) | correct |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        app = r["app"] + (f" ({', '.join(r['preload_env'])})" if r.get("preload_env") else "")
        if r.get("failed"):
            lines.append(f"| {app} | {r['machine']} | {r['ranks']} | FAILED | | | | "
                         f"{r['failed']} | no |")
            continue
        lines.append(
            f"| {app} | {r['machine']} | {r['ranks']} | {r['native_s']:.2f} | "
            f"{r['preloaded_s']:.2f} | "
            f"{ratio_cell(r)} | {chosen(r)} | "
            f"{r['comm_share']} | yes, {r['pairs']} pairs |")
        if r.get("beside_env"):
            lines.append(
                f"| {r['app']} ({', '.join(r['beside_env'])}, in the same pairs) | "
                f"{r['machine']} | {r['ranks']} | {r['native_s']:.2f} | {r['beside_s']:.2f} | "
                f"{ratio_cell(r, 'beside_')} | | | yes, {r['pairs']} pairs |")
    return "\n".join(lines)


def prediction_table(preds, rows):
    measured = {(r["machine"], r["app"]): r for r in rows if not r.get("failed")}
    lines = ["| app | machine | patterns | best predicted (calls) | predicted saving s | "
             "measured saving s (native − preloaded, medians) |", "|---|---|---|---|---|---|"]
    for p in preds:
        best = ", ".join(sorted({f"{q['best']} ({q['calls']})" for q in p["patterns"]
                                 if q["best_pred_s"] < q["native_pred_s"]})) or "native"
        m = measured.get((p["machine"], p["app"]))
        gain = f"{m['native_s'] - m['preloaded_s']:.2f}" if m else "–"
        lines.append(f"| {p['app']} | {p['machine']} | {len(p['patterns'])} | {best} | "
                     f"{p['predicted_saving_s']:.3g} | {gain} |")
    return "\n".join(lines)


def selected(a, log):
    names = a.apps.split(",") if a.apps else (["fft2d", "fftw"] if a.smoke else DEFAULT_APPS)
    for nm in names:
        if nm not in APPS:
            sys.exit(f"apps: unknown application '{nm}' (one of {', '.join(APPS)})")
    ready = []
    for nm in names:
        why = APPS[nm](a.smoke).missing(a.build)
        if why:
            print(f"SKIPPED: apps {nm}: {why}", flush=True)
        else:
            ready.append(nm)
        if a.smoke and ready:
            break
    return ready


def run_apps(machine, launch, n, a, out_path, log, failures):
    lib, why = control_library(a)
    if not lib:
        sys.exit(f"apps: --control {a.control}: {why}")
    rows = []
    with open(out_path, "a") as out:
        for nm in a.ready:
            if a.predict:
                r = predict_point(machine, launch, n, nm, a, out, log)
                if r.get("failed"):
                    failures.append(f"apps {machine} {nm}: {r['failed']}")
            if a.pairs == 0:
                continue
            r = app_point(machine, launch, n, nm, a, lib, out, log)
            if r.get("failed"):
                failures.append(f"apps {machine} {nm}: {r['failed']}")
            rows.append(r)
    return rows


def main(a, here, log, failures):
    out_path = os.path.abspath(a.out or os.path.join(a.build, "results", "apps.jsonl"))
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    if os.path.exists(out_path) and not a.append:
        os.remove(out_path)
    if a.smoke:
        a.pairs = 1
    if a.beside and a.control:
        sys.exit("apps: --beside times the library beside itself; --control replaces it")
    lib = os.path.join(a.build, "wrappers", "libcommsched.so")
    if not os.path.exists(lib):
        sys.exit(f"apps: no {lib} (build the commsched target)")
    machines = a.machines.split(",") if a.machines else ["shm"]
    for m in machines:
        if m not in MACHINES:
            sys.exit(f"apps: unknown machine '{m}' (one of {', '.join(MACHINES)})")
    a.ready = selected(a, log)
    if not a.ready:
        print("SKIPPED: apps: no application available", flush=True)
        return
    for m in machines:
        if m == "shm":
            mpirun = ["mpirun.openmpi", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1"]
            if os.geteuid() == 0:
                mpirun.append("--allow-run-as-root")
            run_apps("shm", mpirun + ["-np", str(a.app_ranks)], a.app_ranks, a, out_path, log,
                     failures)
            continue
        if os.geteuid() != 0:
            print(f"SKIPPED: apps {m}: the emulated cluster needs root", flush=True)
            continue
        cmd = ["bash", os.path.join(here, "netns_cluster.sh"), "--build", a.build,
               # each run's limit, plus as much again per application for its set-up (FFTW
               # measures its plan, up to 5 tries, before the pairs); --beside: a third run
               "--timeout", str(a.timeout * ((4 if a.beside else 3) * a.pairs + 5) *
                                len(a.ready))] + \
              NETNS_CONFIGS[m] + \
              ["--", sys.executable, os.path.join(here, "bench.py"), "apps-inner", "--config", m,
               "--build", a.build, "--out", out_path, "--append", "--pairs", str(a.pairs),
               "--timeout", str(a.timeout), "--apps", ",".join(a.ready)]
        if a.smoke:
            cmd.append("--smoke")
        if a.predict:
            cmd += ["--predict", a.predict]
        if a.preload_env:
            cmd += ["--preload-env", a.preload_env]
        if a.control:
            cmd += ["--control", a.control]
        if a.beside:
            cmd += ["--beside", a.beside]
        if a.fftw_wisdom:
            cmd += ["--fftw-wisdom", os.path.abspath(a.fftw_wisdom)]
        rc = subprocess.run(cmd).returncode
        if rc != 0:
            failures.append(f"apps {m}: exit status {rc}")
    recs = [json.loads(l) for l in open(out_path)]
    rows = [r for r in recs if r["record"] == "summary"]
    print(table(rows), flush=True)
    preds = [r for r in recs if r["record"] == "prediction" and not r.get("failed")]
    if preds:
        print(prediction_table(preds, rows), flush=True)
    log(f"[apps] {len(rows)} points, {sum(1 for r in rows if r.get('failed'))} failed; "
        f"{out_path}")


def inner(a, log, failures):
    mpirun = os.environ.get("CS_MPIRUN")
    if not mpirun:
        sys.exit("bench.py apps-inner runs inside apps/bench/netns_cluster.sh")
    n = int(os.environ["CS_NODES"]) * int(os.environ["CS_RANKS_PER_NODE"])
    a.ready = a.apps.split(",")
    # the launcher yields when idle and carries the cluster's own options already
    run_apps(a.config, [mpirun, "-np", str(n)], n, a, a.out, log, failures)
    if failures:
        sys.exit(1)
