"""The fused CPU kernel for the generator's steps 4-5 (docs/DESIGN.md §2, paper steps 4-5): build once, load, call.

``csrc/spline_product.cpp`` (shipped as package data) computes P = prod_d sum_g B_g(u) S[., d, g, .] and
its backward in one pass per seed coordinate, touching the p+1 non-zero knots only (see the file's
header). It is plain C++ behind a C ABI, called through ``ctypes`` (which releases the GIL).

Why not ``torch.utils.cpp_extension.load``: the kernel needs no torch headers (parsing them is most of an
extension's build time); ``load`` also needs ninja and serialises concurrent builds with a lock file that a killed
build leaves behind, stalling every later process. One small translation unit, the system compiler and an atomic
rename need none of that, and do not depend on the torch ABI.

Build: lazily, on the first call, with ``$CXX`` (else ``c++``, ``g++``, ``clang++``) and ``-O3 -march=native``,
into ``$TORCH_EXTENSIONS_DIR/leviathan_spline/`` (default ``~/.cache/torch_extensions``). The file name carries a
hash of the source, the flags, the compiler's version and this CPU's model and instruction-set flags, so an edited
source, another compiler or a different CPU sharing the cache gets its own build (``-march=native`` code can crash
on an older CPU). It is compiled under a unique temporary name and renamed into place (concurrent builders each
build their own copy); within a process a lock makes the build happen once.

Fallback: if anything fails (no compiler, read-only cache, a load or ABI-version error) ``library()``
returns None after ONE warning, and the generator uses its eager torch path; it never raises.
``LEVIATHAN_SPLINE_KERNEL`` selects: ``auto`` (default: fused when it builds), ``eager`` (never build or
use it), ``fused`` (raise instead of falling back: for CI and benchmarks that must not silently measure
the slow path).

Threads: calls with at least PARALLEL_MIN_WORK multiply-adds use ``torch.get_num_threads()`` threads of
their own (std::thread, not torch's OpenMP pool); results do not depend on the count.

Footguns: the C side trusts its pointers; only ``forward``/``backward`` below call it, after checking device,
dtype, contiguity and shapes. The first call in a fresh cache pays the build (``build()`` can be called ahead of
time). The library links the system libstdc++: in an environment that preloads an older one (some conda setups)
loading fails, with the warning and the eager fallback.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import tempfile
import threading
import warnings
from pathlib import Path

import torch

from ..io import publish

SOURCE = Path(__file__).with_name("csrc") / "spline_product.cpp"
ABI_VERSION = 2
NONFINITE = 3  # status: u holds a NaN or an infinity, nothing computed
NO_MEMORY = 4  # status: the kernel could not allocate its scratch
FLAGS = ["-O3", "-march=native", "-ffp-contract=fast", "-fopenmp-simd", "-fno-math-errno", "-std=c++17", "-shared",
         "-fPIC", "-pthread"]
ENV_MODE = "LEVIATHAN_SPLINE_KERNEL"
MODES = ("auto", "eager", "fused")

# Below this many multiply-adds of the product (U M d_s r) a call stays on one thread: spawning threads
# would cost more than it saves.
PARALLEL_MIN_WORK = 1 << 20

_log = logging.getLogger(__name__)
_lock = threading.Lock()
_state: dict = {"lib": None, "tried": False, "error": None}


def mode() -> str:
    value = os.environ.get(ENV_MODE, "auto").strip().lower() or "auto"
    if value not in MODES:
        raise ValueError(f"{ENV_MODE}={value!r}: choose one of {', '.join(MODES)}")
    return value


def _compiler() -> str | None:
    """$CXX if set (and only it), else the first of c++, g++, clang++ on PATH."""
    if os.environ.get("CXX"):
        return shutil.which(os.environ["CXX"])
    return shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")


def _cpu_signature() -> str:
    """This CPU's model name and instruction-set flags (what ``-march=native`` depends on)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            lines = [ln for ln in f if ln.startswith(("model name", "flags", "Features", "CPU part"))]
        return "".join(sorted(set(lines)))
    except OSError:
        return platform.processor() or platform.machine()


def _cache_dir() -> Path:
    root = os.environ.get("TORCH_EXTENSIONS_DIR")
    if not root:
        from ..cache_place import xdg_cache_home  # a relative value is ignored (round 29, V11)

        xdg = xdg_cache_home() or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(xdg, "torch_extensions")
    return Path(root) / "leviathan_spline"


def _library_path(compiler: str) -> Path:
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=60).stdout
    key = hashlib.sha256()
    for part in (SOURCE.read_bytes(), " ".join(FLAGS).encode(), compiler.encode(), version.encode(),
                 _cpu_signature().encode(), platform.machine().encode()):
        key.update(part)
        key.update(b"\0")
    return _cache_dir() / f"spline_product_{key.hexdigest()[:20]}.so"


def _compile(compiler: str, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=target.name + ".", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        cmd = [compiler, *FLAGS, "-o", tmp, str(SOURCE)]
        _log.info("building the fused spline kernel: %s", " ".join(cmd))
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
        publish(tmp, executable=True)  # mkstemp made it private; a shared cache needs the umask's mode
        os.replace(tmp, target)  # atomic: a concurrent loader sees no file or a whole one
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _load(path: Path) -> ctypes.CDLL:
    lib = ctypes.CDLL(str(path))
    lib.lev_spline_abi_version.restype = ctypes.c_int
    if lib.lev_spline_abi_version() != ABI_VERSION:
        raise RuntimeError(f"{path} reports ABI version {lib.lev_spline_abi_version()}, expected {ABI_VERSION}")
    ptr, i64, i32 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
    for suffix in ("f32", "f64"):
        fwd = getattr(lib, f"lev_spline_forward_{suffix}")
        fwd.argtypes = [ptr, ptr, ptr, i64, i64, i64, i64, i64, i32, i32]
        fwd.restype = i32
        bwd = getattr(lib, f"lev_spline_backward_{suffix}")
        bwd.argtypes = [ptr, ptr, ptr, ptr, ptr, ptr, i64, i64, i64, i64, i64, i32, i32]
        bwd.restype = i32
    return lib


def build() -> Path:
    """Build (if not cached) and return the library's path; raises on failure."""
    compiler = _compiler()
    if compiler is None:
        raise RuntimeError(f"no C++ compiler found ({'$CXX=' + os.environ['CXX'] if os.environ.get('CXX') else 'c++, g++, clang++'})")
    path = _library_path(compiler)
    if not path.is_file():
        _compile(compiler, path)
    return path


def library() -> ctypes.CDLL | None:
    """The loaded kernel, building it on first use; None (after one warning) if it cannot be had."""
    if _state["tried"]:
        return _state["lib"]
    with _lock:
        if not _state["tried"]:
            try:
                _state["lib"] = _load(build())
            except Exception as exc:  # noqa: BLE001 - any failure means: use the eager path
                _state["error"] = f"{type(exc).__name__}: {exc}"
                if mode() == "fused":
                    raise RuntimeError(f"{ENV_MODE}=fused but the fused spline kernel is unavailable: "
                                       f"{_state['error']}") from exc
                warnings.warn(f"leviathan: the fused CPU spline kernel is unavailable ({_state['error']}); "
                              f"using the slower eager torch path", RuntimeWarning, stacklevel=2)
            _state["tried"] = True
    return _state["lib"]


def usable(u: torch.Tensor, S: torch.Tensor) -> bool:
    """Whether the fused kernel takes these inputs (CPU, float32/float64, one dtype) and is available."""
    if u.device.type != "cpu" or S.device.type != "cpu" or u.dtype != S.dtype:
        return False
    if u.dtype not in (torch.float32, torch.float64) or u.dim() != 3 or S.dim() != 4:
        return False
    if mode() == "eager":
        return False
    return library() is not None


def _threads(work: int) -> int:
    return 1 if work < PARALLEL_MIN_WORK else max(1, torch.get_num_threads())


def _suffix(t: torch.Tensor) -> str:
    return "f32" if t.dtype == torch.float32 else "f64"


def _check(u: torch.Tensor, S: torch.Tensor, degree: int) -> tuple[int, int, int, int, int]:
    U, M, d_s = u.shape
    M2, d_s2, kappa, r = S.shape
    if (M2, d_s2) != (M, d_s):
        raise ValueError(f"u {tuple(u.shape)} and S {tuple(S.shape)} disagree on (M, d_s)")
    if degree not in (1, 2, 3):
        raise ValueError(f"spline degree must be 1, 2 or 3, got {degree}")
    if kappa < 2:
        raise ValueError(f"the spline needs at least 2 knots, got {kappa}")
    if not (u.is_contiguous() and S.is_contiguous()):
        raise ValueError("the fused kernel takes contiguous u and S")
    return U, M, d_s, kappa, r


def _raise_for(status: int, what: str) -> None:
    if status == NO_MEMORY:
        raise MemoryError(f"fused spline {what}: out of memory for the kernel's scratch")
    if status != 0:
        raise RuntimeError(f"fused spline {what} failed with status {status}")


def forward(u: torch.Tensor, S: torch.Tensor, degree: int) -> torch.Tensor | None:
    """u (U, M, d_s), S (M, d_s, kappa, r), both contiguous -> P (U, M, r), or None if u is not finite."""
    U, M, d_s, kappa, r = _check(u, S, degree)
    P = u.new_empty(U, M, r)
    lib = library()
    status = getattr(lib, f"lev_spline_forward_{_suffix(u)}")(
        u.data_ptr(), S.data_ptr(), P.data_ptr(), U, M, d_s, kappa, r, degree, _threads(U * M * d_s * r))
    if status == NONFINITE:
        return None
    _raise_for(status, "forward")
    return P


def backward(grad_P: torch.Tensor, u: torch.Tensor, S: torch.Tensor, P: torch.Tensor, degree: int,
             grad_u: torch.Tensor | None, grad_S: torch.Tensor | None) -> bool:
    """Writes grad_u (U, M, d_s) and ADDS into grad_S (M, d_s, kappa, r); either may be None (not needed).

    grad_P and P (U, M, r), u, S as in ``forward``; every tensor contiguous and of one dtype. Returns False
    (nothing written) if u is not finite.
    """
    U, M, d_s, kappa, r = _check(u, S, degree)
    for name, t, shape in (("grad_P", grad_P, (U, M, r)), ("P", P, (U, M, r)), ("grad_u", grad_u, (U, M, d_s)),
                           ("grad_S", grad_S, tuple(S.shape))):
        if t is not None and (tuple(t.shape) != shape or not t.is_contiguous() or t.dtype != u.dtype
                              or t.device != u.device):
            raise ValueError(f"{name}: expected a contiguous {shape} {u.dtype} tensor, got {tuple(t.shape)} {t.dtype}")
    lib = library()
    status = getattr(lib, f"lev_spline_backward_{_suffix(u)}")(
        grad_P.data_ptr(), u.data_ptr(), S.data_ptr(), P.data_ptr(),
        grad_u.data_ptr() if grad_u is not None else None, grad_S.data_ptr() if grad_S is not None else None,
        U, M, d_s, kappa, r, degree, _threads(U * M * d_s * r))
    if status == NONFINITE:
        return False
    _raise_for(status, "backward")
    return True
