from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest import partitions
from ingest.core.partitions import Month


class Command(BaseCommand):
    help = (
        "The channel indexes' monthly partitions (PostgreSQL): list them, make months "
        "ahead, detach an old month (kept whole, never dropped) or attach it back, and move "
        "rows the default partition caught. Run as the tables' owner."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        action = parser.add_mutually_exclusive_group()
        action.add_argument("--ahead", type=int, metavar="N", help="make this month and N more")
        action.add_argument("--detach", metavar="YYYY-MM", help="stop searching this month")
        action.add_argument("--attach", metavar="YYYY-MM", help="search this month again")
        action.add_argument("--adopt", action="store_true", help="empty the default partition")
        parser.add_argument("--tablespace", default="", help="with --detach: move it there")

    def handle(self, *args: Any, **options: Any) -> None:
        if not partitions.partitioned():
            raise CommandError("this database does not partition the channel indexes")
        try:
            if options["ahead"] is not None:
                partitions.months_ahead(options["ahead"])
            elif options["detach"]:
                done = partitions.month_detach(
                    Month.parse(options["detach"]), tablespace=options["tablespace"]
                )
                self.stdout.write(f"detached (kept, not searched): {', '.join(done) or 'none'}")
            elif options["attach"]:
                done = partitions.month_attach(Month.parse(options["attach"]))
                self.stdout.write(f"attached: {', '.join(done) or 'none'}")
            elif options["adopt"]:
                for table, n in partitions.default_adopt().items():
                    self.stdout.write(f"{table}: {n} rows moved out of the default partition")
        except (partitions.PartitionError, ValueError) as e:
            raise CommandError(str(e)) from e
        for table in partitions.TABLES:
            for p in partitions.partitions_list(table):
                state = "attached" if p.attached else "DETACHED"
                month = str(p.month) if p.month else "default"
                rows = "?" if p.rows < 0 else str(p.rows)
                self.stdout.write(f"{p.name:34} {month:8} {state:9} ~{rows} rows {p.bytes} B")
