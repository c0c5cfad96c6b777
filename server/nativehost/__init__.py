"""The browser link: Chrome's native messaging host for the Wherefrom extension.

Chrome starts `wherefrom native-host` (through the launcher `wherefrom install-browser-link`
writes) when the extension asks, passing the caller's origin as the first argument; only the
pinned extension id is listed in the host manifest's `allowed_origins`, and the host checks the
origin again. Two requests exist: where the server is and what its token is (`locate`), and
start it (`start`). See docs/threat-model.md.
"""
