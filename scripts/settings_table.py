"""Print the README's settings table from navigo_core.config.Settings (keep them in step)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from navigo_core.config import PROJECT_ROOT, Settings  # noqa: E402


def rows() -> list[tuple[str, str, str]]:
    out = []
    for name, field in Settings.model_fields.items():
        default = field.default
        if isinstance(default, str) and str(PROJECT_ROOT) in default:
            default = default.replace(str(PROJECT_ROOT), ".")
        shown = f"`{default}`" if default not in ("", None) else "(empty)"
        out.append((name.upper(), shown, field.description or ""))
    return out


if __name__ == "__main__":
    print("| setting | default | effect |\n|---|---|---|")
    for name, default, desc in rows():
        print(f"| `{name}` | {default} | {desc} |")
