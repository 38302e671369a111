"""Health and verification."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from ...front import Door
from ..schemas import ERRORS, Health, VerifyOut
from ..state import door

router = APIRouter(prefix="/api", responses=ERRORS)


@router.get("/health", response_model=Health, tags=["meta"])
def health() -> dict[str, bool]:
    """Liveness: answers without a token and without touching the store."""
    return {"ok": True}


@router.post("/verify", response_model=VerifyOut, tags=["meta"])
def verify(me: Door = Depends(door)) -> dict[str, object]:
    """Check the hash chain of every tree the caller can see."""
    return me.trees.verify()
