from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reviews.calibration import sweeps


class Command(BaseCommand):
    help = (
        "Draw the calibration sample: up to --per-band pairs from every distance band "
        f"({', '.join(sweeps.band_name(lo, hi) for lo, hi in sweeps.BANDS)}) of "
        "every doc type and method, each stored with its sampling weight."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--per-band", type=int, required=True)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--doc-type", default="")
        parser.add_argument("--method", default="")

    def handle(self, *args: object, **options: Any) -> None:
        per_band = int(options["per_band"])
        if per_band < 1:
            raise CommandError("--per-band must be at least 1")
        drawn = sweeps.calibration_sample_make(
            per_band=per_band,
            seed=int(options["seed"]),
            doc_type=str(options["doc_type"]),
            method=str(options["method"]),
        )
        bands: dict[str, int] = {}
        for s in drawn:
            bands[s.band] = bands.get(s.band, 0) + 1
        summary = ", ".join(f"{b}: {n}" for b, n in sorted(bands.items()))
        self.stdout.write(f"{len(drawn)} pair(s) sampled ({summary or 'no pairs'})")
        self.stdout.write("Label them from the desk: /review/calibration/sample/")
