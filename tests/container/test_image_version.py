"""The image says which version it runs: its OCI version label is the package version inside it."""

from __future__ import annotations

from typing import Any

import pytest

import mcpsqueeze

pytestmark = pytest.mark.container


def test_the_image_is_labelled_with_the_version_of_the_package_it_runs(
    docker_client: Any, image: str
) -> None:
    labels = docker_client.images.get(image).labels
    assert labels["org.opencontainers.image.version"] == mcpsqueeze.__version__
    assert labels["org.opencontainers.image.title"] == "mcpsqueeze"
    printed = docker_client.containers.run(
        image, ["--version"], entrypoint="mcpsqueeze", network_mode="none", remove=True
    )
    assert printed.decode().strip() == f"mcpsqueeze, version {mcpsqueeze.__version__}"
