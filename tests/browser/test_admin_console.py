"""The admin's pages load without a failed request in the browser's console."""

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_admin_index_has_no_404_in_the_console(page, live_server) -> None:
    from django.contrib.auth.models import User

    User.objects.create_superuser("root", "root@example.com", "pw-root-123")
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto("/admin/login/?next=/admin/")
    page.fill("input[name=username]", "root")
    page.fill("input[name=password]", "pw-root-123")
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/admin/")
    page.wait_for_load_state("networkidle")
    page.goto("/admin/reviews/")
    page.wait_for_load_state("networkidle")
    assert errors == []
    icon = page.request.get(f"{live_server.url}/favicon.ico")
    assert icon.status == 200 and "svg" in icon.headers["content-type"]
