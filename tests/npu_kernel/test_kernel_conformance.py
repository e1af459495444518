"""jupyter_kernel_test's protocol conformance suite against the installed ascend-npu spec."""

from __future__ import annotations

import os
import tempfile
from typing import ClassVar

import jupyter_kernel_test

from tests.npu_kernel.conftest import run_cli


class NpuKernelConformance(jupyter_kernel_test.KernelTests):
    kernel_name = "ascend-npu"
    language_name = "python"
    file_extension = ".py"

    code_hello_world = "print('hello, world')"
    code_stderr = "import sys; print('test', file=sys.stderr)"
    completion_samples: ClassVar = [{"text": "zi", "matches": {"zip"}}]
    complete_code_samples: ClassVar = ["1", "print('hello, world')", "def f(x):\n  return x*2\n\n"]
    incomplete_code_samples: ClassVar = ["print('''hello", "def f(x):\n  x*2"]
    invalid_code_samples: ClassVar = ["import = 7q"]
    code_page_something = "zip?"
    code_generate_error = "raise ValueError('npu')"
    code_execute_result: ClassVar = [{"code": "1+2+3", "result": "6"}]
    code_display_data: ClassVar = [
        {
            "code": "from IPython.display import HTML, display; display(HTML('<b>x</b>'))",
            "mime": "text/html",
        },
        {"code": "%npu", "mime": "text/html"},
    ]
    code_history_pattern = "1?2*"
    supported_history_operations = ("tail", "search")
    code_inspect_sample = "zip"
    code_clear_output = "from IPython.display import clear_output; clear_output()"

    _tmp: ClassVar[tempfile.TemporaryDirectory[str]]
    _saved: ClassVar[dict[str, str | None]]

    @classmethod
    def setUpClass(cls) -> None:
        # Our own temp prefix: unittest classes don't get pytest's session fixture.
        cls._tmp = tempfile.TemporaryDirectory()
        proc = run_cli("install", "--prefix", cls._tmp.name)
        assert proc.returncode == 0, proc.stderr
        cls._saved = {
            k: os.environ.get(k) for k in ("JUPYTER_PATH", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR")
        }
        os.environ["JUPYTER_PATH"] = os.path.join(cls._tmp.name, "share", "jupyter")
        os.environ["JUPYTER_RUNTIME_DIR"] = os.path.join(cls._tmp.name, "runtime")
        os.environ["IPYTHONDIR"] = os.path.join(cls._tmp.name, "ipython")
        super().setUpClass()

    @classmethod
    def tearDownClass(cls) -> None:
        super().tearDownClass()
        for key, value in cls._saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        cls._tmp.cleanup()
