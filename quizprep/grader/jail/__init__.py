"""The worker's jail: what the learner's process may see and do, in one place.

* :mod:`spec` — :class:`JailSpec`, data only: namespaces, uid, mounts, devices, environment, limits;
* :mod:`policy` — :func:`jail_for`, the one place a rule is decided;
* :mod:`launch` — starts a process in a spec (bubblewrap), or says why it could not;
* :mod:`applied` — what was applied, as ``grade --json`` shows it under ``environment.sandbox``.
"""
