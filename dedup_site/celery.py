"""The Celery app. Workers run every pipeline step up to grouping."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")

app = Celery("dedup_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
