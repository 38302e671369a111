"""The git verbs of conversations beyond fork, edit and splice: compare two paths
(`diff`), bring a branch's outcome back to another line (`merge`), run a path's user
turns again on another base or model (`replay`), and start a new tree from a message
with nothing before it (`fresh`, the tail-fork).

Each works on resolved positions of one Loom; the front door (`loomdb.front.branches`)
resolves names for its caller and checks what they may see first."""
