"""Name tables of the static guard: which modules, functions and attributes each rule watches.

Dotted names are as the source would spell them after import aliases are resolved
(`import time as t; t.perf_counter` is `time.perf_counter`).
"""

from __future__ import annotations

# Importing any of these is the finding: a kernel has no use for them.
IMPORT_RULES: dict[str, str] = {
    "farm": "HARNESS_TAMPERING",
    "threading": "BACKGROUND_THREAD",
    "_thread": "BACKGROUND_THREAD",
    "multiprocessing": "BACKGROUND_THREAD",
    "concurrent": "BACKGROUND_THREAD",
    "torch.multiprocessing": "BACKGROUND_THREAD",
    "subprocess": "SUBPROCESS",
    "pty": "SUBPROCESS",
    "pip": "RUNTIME_PACKAGE_INSTALL",
    "ensurepip": "RUNTIME_PACKAGE_INSTALL",
    "socket": "NETWORK_ACCESS",
    "ssl": "NETWORK_ACCESS",
    "urllib": "NETWORK_ACCESS",
    "http": "NETWORK_ACCESS",
    "ftplib": "NETWORK_ACCESS",
    "smtplib": "NETWORK_ACCESS",
    "telnetlib": "NETWORK_ACCESS",
    "xmlrpc": "NETWORK_ACCESS",
    "requests": "NETWORK_ACCESS",
    "httpx": "NETWORK_ACCESS",
    "aiohttp": "NETWORK_ACCESS",
    "urllib3": "NETWORK_ACCESS",
    "websocket": "NETWORK_ACCESS",
    "websockets": "NETWORK_ACCESS",
    "paramiko": "NETWORK_ACCESS",
    "ctypes": "RAW_MEMORY",
    "_ctypes": "RAW_MEMORY",
    "cffi": "RAW_MEMORY",
    "mmap": "RAW_MEMORY",
    "cuda": "RAW_MEMORY",  # cuda-python: driver API
    "pycuda": "RAW_MEMORY",
    "signal": "SIGNAL_HANDLER",
    "atexit": "SIGNAL_HANDLER",
    "faulthandler": "SIGNAL_HANDLER",
    "marshal": "DYNAMIC_CODE",
    "gc": "",  # only some calls matter; listed so that aliases resolve
}

# Calling any of these is the finding.
CALL_RULES: dict[str, str] = {
    "gc.get_objects": "INTROSPECTION",
    "gc.get_referrers": "INTROSPECTION",
    "gc.get_referents": "INTROSPECTION",
    "inspect.stack": "INTROSPECTION",
    "inspect.currentframe": "INTROSPECTION",
    "inspect.getouterframes": "INTROSPECTION",
    "inspect.getinnerframes": "INTROSPECTION",
    "inspect.trace": "INTROSPECTION",
    "inspect.getframeinfo": "INTROSPECTION",
    "sys._getframe": "INTROSPECTION",
    "sys._current_frames": "INTROSPECTION",
    "traceback.extract_stack": "INTROSPECTION",
    "traceback.walk_stack": "INTROSPECTION",
    "sys.settrace": "TRACE_HOOK",
    "sys.setprofile": "TRACE_HOOK",
    "sys.addaudithook": "TRACE_HOOK",
    "threading.settrace": "TRACE_HOOK",
    "threading.setprofile": "TRACE_HOOK",
    "sys.monitoring.register_callback": "TRACE_HOOK",
    "sys.monitoring.use_tool_id": "TRACE_HOOK",
    "os.fork": "BACKGROUND_THREAD",
    "os.forkpty": "BACKGROUND_THREAD",
    "os.register_at_fork": "BACKGROUND_THREAD",
    "os.system": "SUBPROCESS",
    "os.popen": "SUBPROCESS",
    "os.posix_spawn": "SUBPROCESS",
    "os.posix_spawnp": "SUBPROCESS",
    "torch.cuda.CUDAGraph": "CUDA_GRAPH_REPLAY",
    "torch.cuda.graph": "CUDA_GRAPH_REPLAY",
    "torch.cuda.graphs.CUDAGraph": "CUDA_GRAPH_REPLAY",
    "torch.cuda.make_graphed_callables": "CUDA_GRAPH_REPLAY",
    "triton.testing.do_bench_cudagraph": "CUDA_GRAPH_REPLAY",
    "exec": "DYNAMIC_CODE",
    "eval": "DYNAMIC_CODE",
    "compile": "DYNAMIC_CODE",
    "importlib.util.spec_from_file_location": "DYNAMIC_CODE",
    "importlib.util.module_from_spec": "DYNAMIC_CODE",
    "importlib.machinery.SourceFileLoader": "DYNAMIC_CODE",
    "importlib.reload": "DYNAMIC_CODE",
    "types.FunctionType": "DYNAMIC_CODE",
    "types.CodeType": "DYNAMIC_CODE",
    "sys.path.append": "RUNTIME_PACKAGE_INSTALL",
    "sys.path.insert": "RUNTIME_PACKAGE_INSTALL",
    "sys.path.extend": "RUNTIME_PACKAGE_INSTALL",
    "site.addsitedir": "RUNTIME_PACKAGE_INSTALL",
    "os.remove": "FILESYSTEM_WRITE",
    "os.unlink": "FILESYSTEM_WRITE",
    "os.rename": "FILESYSTEM_WRITE",
    "os.replace": "FILESYSTEM_WRITE",
    "os.makedirs": "FILESYSTEM_WRITE",
    "os.mkdir": "FILESYSTEM_WRITE",
    "os.rmdir": "FILESYSTEM_WRITE",
    "os.removedirs": "FILESYSTEM_WRITE",
    "os.chmod": "FILESYSTEM_WRITE",
    "os.chown": "FILESYSTEM_WRITE",
    "os.symlink": "FILESYSTEM_WRITE",
    "os.link": "FILESYSTEM_WRITE",
    "os.truncate": "FILESYSTEM_WRITE",
    "os.mkfifo": "FILESYSTEM_WRITE",
    "shutil.copy": "FILESYSTEM_WRITE",
    "shutil.copy2": "FILESYSTEM_WRITE",
    "shutil.copyfile": "FILESYSTEM_WRITE",
    "shutil.copytree": "FILESYSTEM_WRITE",
    "shutil.move": "FILESYSTEM_WRITE",
    "shutil.rmtree": "FILESYSTEM_WRITE",
    "torch.save": "FILESYSTEM_WRITE",
    "os.write": "OUTPUT_CHANNEL",
    "os.writev": "OUTPUT_CHANNEL",
    "os.pwrite": "OUTPUT_CHANNEL",
    "os.sendfile": "OUTPUT_CHANNEL",
    "os.dup": "OUTPUT_CHANNEL",
    "os.dup2": "OUTPUT_CHANNEL",
    "os.fdopen": "OUTPUT_CHANNEL",
    "os.openpty": "OUTPUT_CHANNEL",
    "os.kill": "SIGNAL_HANDLER",
    "os.killpg": "SIGNAL_HANDLER",
    "os._exit": "EARLY_EXIT",
    "os.abort": "EARLY_EXIT",
    "sys.exit": "EARLY_EXIT",
    "exit": "EARLY_EXIT",
    "quit": "EARLY_EXIT",
    "torch.cuda.caching_allocator_alloc": "RAW_MEMORY",
    "torch.cuda.caching_allocator_delete": "RAW_MEMORY",
    "torch.cuda.cudart": "RAW_MEMORY",
    "torch.cuda.memory.caching_allocator_alloc": "RAW_MEMORY",
    "torch.cuda.memory.caching_allocator_delete": "RAW_MEMORY",
    "torch.cuda.memory.change_current_allocator": "RAW_MEMORY",
    "torch.cuda.memory.CUDAPluggableAllocator": "RAW_MEMORY",
    "torch.cuda.set_per_process_memory_fraction": "RAW_MEMORY",
    "torch.from_blob": "RAW_MEMORY",
    "torch.load": "PRECOMPUTED_DATA",
    "numpy.load": "PRECOMPUTED_DATA",
    "numpy.fromfile": "PRECOMPUTED_DATA",
    "pickle.load": "PRECOMPUTED_DATA",
    "pickle.loads": "PRECOMPUTED_DATA",
    "base64.b64decode": "PRECOMPUTED_DATA",
    "zlib.decompress": "PRECOMPUTED_DATA",
    "lzma.decompress": "PRECOMPUTED_DATA",
    "torch.set_float32_matmul_precision": "PRECISION_SETTING",
}

# Method names that are findings on any object (their receivers are usually local values).
METHOD_RULES: dict[str, str] = {
    "write_text": "FILESYSTEM_WRITE",
    "write_bytes": "FILESYSTEM_WRITE",
    "touch": "FILESYSTEM_WRITE",
    "symlink_to": "FILESYSTEM_WRITE",
    "hardlink_to": "FILESYSTEM_WRITE",
    "read_text": "FILESYSTEM_READ",
    "read_bytes": "FILESYSTEM_READ",
    "replay": "CUDA_GRAPH_REPLAY",
    "capture_begin": "CUDA_GRAPH_REPLAY",
}

# Attributes whose mere use is the finding (frames, the real stdout, allocator internals).
ATTRIBUTE_RULES: dict[str, str] = {
    "f_back": "INTROSPECTION",
    "f_locals": "INTROSPECTION",
    "f_globals": "INTROSPECTION",
    "tb_frame": "INTROSPECTION",
    "gi_frame": "INTROSPECTION",
    "cr_frame": "INTROSPECTION",
    "ag_frame": "INTROSPECTION",
    "__globals__": "INTROSPECTION",
    "__closure__": "INTROSPECTION",
    "__subclasses__": "INTROSPECTION",
    "__stdout__": "OUTPUT_CHANNEL",
    "__stderr__": "OUTPUT_CHANNEL",
}

# Prefixes of dotted names whose use is the finding.
PREFIX_RULES: dict[str, str] = {
    "torch.cuda.memory._": "RAW_MEMORY",
    "torch._C._cuda_": "RAW_MEMORY",
    "torch.cuda._": "PRIVATE_TORCH_API",
    "torch._C": "PRIVATE_TORCH_API",
    "subprocess.": "SUBPROCESS",
    "os.exec": "SUBPROCESS",
    "os.spawn": "SUBPROCESS",
    "signal.": "SIGNAL_HANDLER",
}

# Assigning to these (or to attributes under them) falsifies timing.
TIMER_TARGETS = (
    "torch.cuda.Event",
    "torch.cuda.Event.",
    "torch.cuda.synchronize",
    "torch.cuda.current_stream",
    "torch.cuda.Stream.",
    "torch.cuda.streams.",
    "torch.Event",
    "torch.Event.",
    "torch.cuda.Event",
    "torch.xpu.synchronize",
    "torch.mps.synchronize",
    "torch.cpu.synchronize",
    "time.",
    "triton.testing.",
    "triton.runtime.",
    "torch.profiler.",
    "torch.autograd.profiler.",
)
PRECISION_TARGETS = ("torch.backends.",)

# Calls whose result identifies a tensor object or its bytes: used as a cache key, it replays.
IDENTITY_CALLS = {"id", "hash"}
IDENTITY_METHODS = {"data_ptr", "tobytes", "untyped_storage", "storage", "_cdata"}
IDENTITY_ATTRIBUTES = {"_cdata", "__array_interface__", "__cuda_array_interface__"}

MEMO_DECORATORS = {"functools.cache", "functools.lru_cache", "functools.cached_property"}
ENTRY_POINTS = {"kernel", "custom_kernel", "forward"}
CONTAINER_FACTORIES = {
    "dict",
    "list",
    "set",
    "collections.OrderedDict",
    "collections.defaultdict",
    "collections.deque",
}
WEAK_CONTAINERS = {"weakref.WeakKeyDictionary", "weakref.WeakValueDictionary"}
STREAM_FACTORIES = {
    "torch.cuda.Stream",
    "torch.cuda.stream",
    "torch.cuda.ExternalStream",
    "torch.Stream",
    "torch.cuda.streams.Stream",
}
SYNC_METHODS = {"synchronize", "wait_stream", "wait_event", "wait"}
TENSOR_BASES = {
    "torch.Tensor",
    "torch._C._TensorBase",
    "torch._C.TensorBase",
    "torch.utils._python_dispatch.TorchDispatchMode",
    "torch.overrides.TorchFunctionMode",
}
TENSOR_HOOKS = {"__torch_function__", "__torch_dispatch__"}
DATA_LOADERS = {
    "torch.load",
    "numpy.load",
    "pickle.loads",
    "pickle.load",
    "torch.tensor",
    "torch.as_tensor",
    "torch.from_numpy",
    "torch.full",
    "torch.zeros",
    "torch.ones",
    "torch.empty",
    "numpy.array",
}

# The only gc function a kernel has a use for; the rest walk or rewire the object graph.
GC_ALLOWED = {"gc.collect"}
# Reflective calls whose attribute-name argument must be a literal the guard can read.
REFLECTIVE_CALLS = {
    "operator.attrgetter",
    "operator.methodcaller",
    "object.__getattribute__",
    "type.__getattribute__",
    "inspect.getattr_static",
    "vars",
    "globals",
    "locals",
}
# Methods that change a namespace dict (vars(module).update(...)).
NAMESPACE_WRITERS = {"update", "setdefault", "pop", "popitem", "clear", "__setitem__"}

# Environment keys that hold secrets or the evaluation's seeds.
SECRET_KEY_WORDS = (
    "SEED",
    "SECRET",
    "TOKEN",
    "KEY",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
    "FARM_",
    "AWS_",
    "S3_",
    "DATABASE",
    "BROKER",
)

# Names of guarded functions that the text pass looks for when built out of string pieces.
GUARDED_WORDS = (
    "perf_counter",
    "elapsed_time",
    "synchronize",
    "get_objects",
    "get_referrers",
    "_getframe",
    "currentframe",
    "f_back",
    "f_locals",
    "f_globals",
    "settrace",
    "setprofile",
    "data_ptr",
    "do_bench",
    "__stdout__",
    "sys.modules",
    "farm.harness",
    "__import__",
    "__builtins__",
    "subprocess",
    "ctypes",
    "socket",
    "environ",
    "Event",
)
