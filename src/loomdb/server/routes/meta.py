"""Health, verification, who the caller is and the models they may use."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from ...front import Door
from ..schemas import ERRORS, Health, MeOut, ModelsOut, VerifyOut
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


@router.get("/me", response_model=MeOut, tags=["meta"])
def me(me: Door = Depends(door)) -> dict[str, object]:
    """Who the caller is: the user a token names (`users: true`), or the operator of a
    store without users (`user: null`). An unknown token is a 401, so the page checks a
    token here before it keeps it."""
    user = me.caller.user
    return {"user": user.name if user is not None else None, "users": user is not None}


@router.get("/models", response_model=ModelsOut, tags=["meta"])
def models(me: Door = Depends(door)) -> dict[str, object]:
    """The models a caller may name when generating (the operator's served aliases),
    and the one used when none is named."""
    return me.nodes.models()
