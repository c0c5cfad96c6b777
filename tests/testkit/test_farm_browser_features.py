"""The farm runs Chromium with the network and privacy features users have on: its launch line
never switches off Local / Private Network Access, HTTPS upgrades, storage partitioning or web
security (what the farm proves about the wire would not hold for users' browsers otherwise)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from testkit.farm.browser import chromium_args

USERS_HAVE_ON = {
    "LocalNetworkAccessChecks",
    "PrivateNetworkAccessSendPreflights",
    "PrivateNetworkAccessRespectPreflightResults",
    "BlockInsecurePrivateNetworkRequests",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "ThirdPartyStoragePartitioning",
}
NEVER = ("--disable-web-security", "--allow-running-insecure-content", "--disable-site-isolation-trials")


def test_the_farm_keeps_the_features_users_have_on() -> None:
    args = chromium_args(Path("/nonexistent/extension"), SimpleNamespace(proxy_args=[]))  # type: ignore[arg-type]
    disabled = {f for a in args if a.startswith("--disable-features=") for f in a.split("=", 1)[1].split(",")}
    assert disabled, "no --disable-features on the launch line: this check would pass on any list"
    assert disabled & USERS_HAVE_ON == set()
    assert [a for a in args if a.startswith(NEVER)] == []
