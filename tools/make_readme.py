"""README.md is generated from nbs/index.ipynb (the nbdev convention, without Quarto).

usage: python tools/make_readme.py          # write README.md
       python tools/make_readme.py --check  # exit 1 if README.md is out of date
Markdown cells are copied; code cells become ```python blocks, their text outputs ``` blocks;
cells marked `#| hide` are left out.
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def render(nb_path: Path) -> str:
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    parts = []
    for cell in nb["cells"]:
        src = "".join(cell["source"]).strip()
        if not src or "#| hide" in src.splitlines()[0:3] or src.startswith("#| hide"):
            continue
        if cell["cell_type"] == "markdown":
            parts.append(src)
        elif cell["cell_type"] == "code":
            code = "\n".join(l for l in src.splitlines() if not l.startswith("#|")).strip()
            if code:
                parts.append(f"```python\n{code}\n```")
            for out in cell.get("outputs", []):
                text = "".join(out.get("text", "") or out.get("data", {}).get("text/plain", "")).rstrip()
                if text:
                    parts.append(f"```\n{text}\n```")
    return "<!-- generated from nbs/index.ipynb by tools/make_readme.py: edit the notebook, not this file -->\n\n" \
        + "\n\n".join(parts) + "\n"


def main(argv):
    text = render(ROOT / "nbs" / "index.ipynb")
    readme = ROOT / "README.md"
    if "--check" in argv:
        if not readme.exists() or readme.read_text(encoding="utf-8") != text:
            print("README.md is out of date with nbs/index.ipynb: run `python tools/make_readme.py`")
            return 1
        return 0
    readme.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
