from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0013_calibration_figures"),
    ]

    operations = [
        migrations.AddField(
            model_name="reviewerpreference",
            name="language",
            field=models.CharField(
                blank=True,
                help_text="The desk's language for this editor (a code of LANGUAGES); blank: "
                "the browser's Accept-Language, else LANGUAGE_CODE.",
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="reviewerpreference",
            name="time_zone",
            field=models.CharField(
                blank=True,
                help_text="The time zone the desk shows dates in (one of DESK_TIME_ZONES); "
                "blank: UTC.",
                max_length=64,
            ),
        ),
    ]
