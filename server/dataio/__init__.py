"""Your data in and out, the data side: export formats and schema, the import writer, the export
reader, slugs, backup and restore of the database file, and their routes (the commands that use
them are in server/commands/)."""
