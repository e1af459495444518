"""Words for ACL stops: the stopped event's description and the exceptionInfo body."""

from __future__ import annotations

import os
from typing import Any

FILTER_ID = "aclErrors"
FILTER = {
    "filter": FILTER_ID,
    "label": "ACL errors",
    "description": "Stop at the line of any failing AscendCL call, or at the line that "
    "launched work which failed later at a synchronisation point.",
    "default": True,
}


def _where(site: dict[str, Any] | None) -> str:
    if not site or site.get("line") is None:
        return "?"
    return f"{os.path.basename(str(site.get('file')))}:{site['line']}"


def _code(info: dict[str, Any]) -> str:
    code = info.get("code")
    return f"{info.get('name')} ({code})" if code is not None else str(info.get("name"))


def _surfaced_later(info: dict[str, Any]) -> bool:
    launch, site = info.get("launch_site"), info.get("site")
    if not launch:
        return False
    return not site or (launch.get("file"), launch.get("line")) != (
        site.get("file"),
        site.get("line"),
    )


def stopped_description(info: dict[str, Any]) -> str:
    """One line naming the error, e.g. for an async failure where it was launched and surfaced."""
    if info.get("kind") == "sanitizer":
        text = f"ACL sanitizer: {info.get('check') or 'finding'}, {_code(info)}"
    else:
        text = f"ACL error {_code(info)}"
    if info.get("api"):
        text += f" in {info['api']}"
    if info.get("detail"):
        text += f": {info['detail']}"
    elif info.get("meaning"):
        text += f": {info['meaning']}"
    if _surfaced_later(info):
        text += f" (launched at {_where(info.get('launch_site'))}, surfaced at synchronisation on {_where(info.get('site'))})"
    return text


def exception_info(info: dict[str, Any]) -> dict[str, Any]:
    """The exceptionInfo response body for an ACL stop; `acl` carries the raw facts."""
    lines = [f"{_code(info)}" + (f" returned by {info['api']}" if info.get("api") else "")]
    if info.get("meaning"):
        lines.append(f"Meaning: {info['meaning']}")
    if info.get("fix"):
        lines.append(f"Fix: {info['fix']}")
    for label, key in (
        ("Launched at", "launch_site"),
        ("Surfaced at", "site"),
        ("Allocated at", "alloc_site"),
        ("Freed at", "free_site"),
    ):
        site = info.get(key)
        if site and site.get("line") is not None and (key != "site" or _surfaced_later(info)):
            lines.append(f"{label} {site.get('file')}:{site['line']}")
    description = stopped_description(info)
    if info.get("fix"):
        description += f"\nFix: {info['fix']}"
    return {
        "exceptionId": str(info.get("name")),
        "description": description,
        "breakMode": "always",
        "details": {
            "message": info.get("message") or description,
            "typeName": "AclError",
            "fullTypeName": "npu_runtime.errors.AclError",
            "stackTrace": "\n".join(lines),
        },
        "acl": {k: v for k, v in info.items() if k not in ("thread",)},
    }


def explained(body: dict[str, Any], explanation: str) -> dict[str, Any]:
    """debugpy's exceptionInfo body for the program's own exception, with what the bare ACL
    code it names means (the `ascend-lens run` lines) added to the description and details."""
    text = explanation.rstrip("\n")
    if not text:
        return body
    details = dict(body.get("details") or {})
    trace = str(details.get("stackTrace") or "")
    details["stackTrace"] = f"{trace.rstrip()}\n{text}" if trace else text
    return {
        **body,
        "description": f"{body.get('description') or ''}\n{text}",
        "details": details,
    }
