"""Health and verification."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from ...users import Access, Everyone
from ..schemas import ERRORS, Health, VerifyOut
from ..state import access, state_of

router = APIRouter(prefix="/api", responses=ERRORS)


@router.get("/health", response_model=Health, tags=["meta"])
def health() -> dict[str, bool]:
    """Liveness: answers without a token and without touching the store."""
    return {"ok": True}


@router.post("/verify", response_model=VerifyOut, tags=["meta"])
def verify(request: Request, who: Access = Depends(access)) -> dict[str, object]:
    """Check the hash chain of every tree the caller can see."""
    with state_of(request).using() as lm:
        if isinstance(who, Everyone):
            return dict(lm.verify().to_json())
        ok, checked, broken = True, 0, []
        for tree in who.trees() + who.trees(archived=True):
            part = lm.verify(tree.id).to_json()
            ok, checked = ok and part["ok"], checked + part["checked"]
            broken += part["broken"]
        return {"ok": ok, "checked": checked, "broken": broken}
