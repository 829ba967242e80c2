"""Write vectors as plain JSON files (with their schema, an index and the traceability report) and read them back."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from kcspec.conformance.protocol.schema_gen import SCHEMA_DIR
from kcspec.conformance.vectors.model import Vector, VectorError, dumps, from_json
from kcspec.spec import bounded_json

INDEX = "index.json"
SCHEMA_SUBDIR = "schema"


def vector_path(root: Path, v: Vector) -> Path:
    return root / v.profile / v.level.name / f"{v.id}.json"


def export(vectors: Sequence[Vector], root: Path, traceability: str | None = None) -> int:
    """Write every vector, the schemas and an index under ``root``; returns the number of files written."""
    root.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    for v in vectors:
        if v.id in seen:
            raise ValueError(f"two vectors share the id {v.id!r}")
        seen.add(v.id)
        path = vector_path(root, v)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dumps(v))
    schema_dir = root / SCHEMA_SUBDIR
    schema_dir.mkdir(exist_ok=True)
    for name in ("vector.json", "protocol.json"):
        (schema_dir / name).write_text((SCHEMA_DIR / name).read_text())
    index = [
        {
            "id": v.id,
            "profile": v.profile,
            "level": v.level.name,
            "sections": list(v.sections),
            "file": str(vector_path(root, v).relative_to(root)),
        }
        for v in vectors
    ]
    (root / INDEX).write_text(json.dumps(index, indent=1, ensure_ascii=False) + "\n")
    if traceability is not None:
        (root / "TRACEABILITY.md").write_text(traceability)
    return len(vectors)


def load_dir(root: Path) -> list[Vector]:
    """Every vector file under ``root`` (schema and index files are skipped); ``VectorError`` names the file."""
    if not root.is_dir():
        raise VectorError(f"{root}: not a directory of vectors")
    out: list[Vector] = []
    for path in sorted(root.rglob("*.json")):
        rel = path.relative_to(root)
        if rel.parts[0] == SCHEMA_SUBDIR or rel.name == INDEX:
            continue
        out.append(load_file(path))
    if not out:
        raise VectorError(f"{root}: no vector files found")
    return out


def load_file(path: Path) -> Vector:
    try:
        data = bounded_json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise VectorError(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise VectorError(
            f"{path}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    return from_json(data, str(path))


def ids(vectors: Iterable[Vector]) -> list[str]:
    return [v.id for v in vectors]
