import hashlib

from django.conf import settings
from django.contrib.auth.models import Group, Permission, User
from django.core.management.base import BaseCommand, CommandParser

from dedup_site.roles import AUDITOR_PERMISSIONS, CRAWLER_PERMISSIONS, EDITOR_PERMISSIONS
from ingest.models import ApiToken, Site
from ingest.services import methods_ensure

# Demo accounts only: the demo runs on a local SQLite file.
DEMO_USERS = [
    ("editor", "demo-editor", "editor-demo-pass"),
    ("auditor", "demo-auditor", "auditor-demo-pass"),
    ("admin", "demo-admin", "admin-demo-pass"),
    ("crawler", "demo-crawler", "crawler-demo-pass"),
    ("adjudicator", "demo-adjudicator", "adjudicator-demo-pass"),
]
DEMO_API_TOKEN = "demo-crawler-token"

SITE_SETTINGS = {
    "news.example.com": (10, "article"),
    "wire.example.org": (5, "article"),
    "shop.example.com": (5, "product"),
    "tintuc.example.vn": (5, "article"),
    "xinwen.example.cn": (5, "article"),
    # A content farm that rewrites other sites' stories (the demo's rewritten story):
    # articles, and the lowest priority, so the original represents a group.
    "roundup.example.org": (1, "article"),
}


def _permissions(role: str) -> list[Permission]:
    """editor: label, split, choose representatives; auditor: read labels and the decision
    log; crawler: send pages through the API; adjudicator: read, and the final label of
    disputed pairs (by role); admin: everything (superuser)."""
    names = {
        "editor": EDITOR_PERMISSIONS,
        "auditor": AUDITOR_PERMISSIONS,
        "crawler": CRAWLER_PERMISSIONS,
        "adjudicator": AUDITOR_PERMISSIONS,
    }.get(role, ())
    if role == "admin":
        names = EDITOR_PERMISSIONS + CRAWLER_PERMISSIONS
    out: list[Permission] = []
    for name in names:
        app_label, codename = name.split(".")
        out.extend(Permission.objects.filter(content_type__app_label=app_label, codename=codename))
    return out


class Command(BaseCommand):
    help = "Create the demo roles, accounts, API token and site settings; print the logins."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--url",
            default="http://127.0.0.1:8000/",
            help="where the desk will listen (printed with the logins)",
        )

    def handle(self, *args: object, **options: object) -> None:
        methods_ensure()
        for host, (priority, doc_type) in SITE_SETTINGS.items():
            Site.objects.update_or_create(
                host=host, defaults={"priority": priority, "default_doc_type": doc_type}
            )
        lines = [f"Demo accounts (log in at {options['url']}):"]
        for role, username, password in DEMO_USERS:
            group, _ = Group.objects.get_or_create(name=role)
            group.permissions.add(*_permissions(role))
            user, _ = User.objects.get_or_create(username=username)
            user.set_password(password)
            user.is_staff = role in {"admin", "auditor"}
            user.is_superuser = role == "admin"
            user.save()
            user.groups.add(group)
            lines.append(f"  {role:<8} {username} / {password}")
        crawler = User.objects.get(username="demo-crawler")
        digest = hashlib.sha256(DEMO_API_TOKEN.encode()).hexdigest()
        # The token acts as the crawler account (an older demo gave it to the editor).
        ApiToken.objects.update_or_create(
            key_sha256=digest, defaults={"name": "demo crawler", "user": crawler}
        )
        lines.append(f"  API token (Authorization: Bearer …): {DEMO_API_TOKEN}")
        metrics = f"{str(options['url']).rstrip('/')}/metrics"
        if settings.METRICS_TOKEN:
            lines.append(
                f"  Prometheus metrics: curl -H 'Authorization: Bearer "
                f"{settings.METRICS_TOKEN}' {metrics}"
            )
        else:
            lines.append(
                f"  Prometheus metrics: METRICS_TOKEN is not set: {metrics} answers no one"
            )
        names = ", ".join(f"{name} ({code})" for code, name in settings.LANGUAGES)
        lines.append(
            f"  Languages: {names}. Pick one (and a time zone) in the desk's header; it is "
            "kept per editor. Signed out, the browser's language decides."
        )
        self.stdout.write("\n".join(lines))
