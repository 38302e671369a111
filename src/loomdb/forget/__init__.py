"""Forgetting: delete, redact, retention and the record of forgetting (issue 26).

`service` deletes and redacts; `areas` erases what the areas beside the core hold of
forgotten nodes; `retention` deletes trees not touched for a while. docs/forget.md
says what each erases, what it keeps and why the chain still holds.
"""
