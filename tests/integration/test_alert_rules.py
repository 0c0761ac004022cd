"""deploy/prometheus: the scrape config and alert rules are valid for promtool, and the
alert unit tests (promtool test rules) pass: each alert fires on the series it must and stays
quiet on the ones it must not."""

from __future__ import annotations

from observability_tools import DEPLOY_PROMETHEUS, promtool


def test_prometheus_config_and_rules_are_valid():
    checked = promtool("check", "config", str(DEPLOY_PROMETHEUS / "prometheus.yml"))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    rules = promtool("check", "rules", str(DEPLOY_PROMETHEUS / "alerts.yml"))
    assert rules.returncode == 0, rules.stdout + rules.stderr
    assert "SUCCESS: 5 rules found" in rules.stdout


def test_every_alert_has_a_promtool_unit_test_and_they_pass():
    tests = DEPLOY_PROMETHEUS / "tests" / "alerts_test.yml"
    rules_text = (DEPLOY_PROMETHEUS / "alerts.yml").read_text()
    tests_text = tests.read_text()
    alerts = [line.split(":", 1)[1].strip() for line in rules_text.splitlines()
              if line.strip().startswith("- alert:")]
    assert len(alerts) == 5
    for alert in alerts:
        assert f"alertname: {alert}" in tests_text, f"no promtool test for {alert}"
    result = promtool("test", "rules", str(tests))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout
