"""A SQLite database's upkeep: a consistent copy while writers run (``backup.py``), putting a
checked copy back (``restore.py``), and checking a whole file (``check.py``)."""

from hippo.stores.sqlite.upkeep.backup import backup as backup_file
from hippo.stores.sqlite.upkeep.check import check as check_file
from hippo.stores.sqlite.upkeep.restore import restore as restore_file

__all__ = ["backup_file", "check_file", "restore_file"]
