"""Your data in and out: chat-export import, export, backup and restore."""
