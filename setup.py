"""Packaging, driven by settings.ini (the nbdev 2 convention; nbdev_export keeps pyproject.toml, whose
dynamic fields are all set here).

`pip install -e ".[dev]"` installs everything the notebooks, tests and docs need;
`pip install .` installs only what `import retrieval_lit` and the command line need;
`pip install ".[plots]"`, `".[widgets]"`, `".[dask]"`, `".[torch]"` add matplotlib, ipywidgets, dask, PyTorch for
those modules; `".[peers]"` installs the peer libraries that tests/test_peers.py and chapter 75 run, each pinned to
the release whose behaviour the chapters describe (dev includes them: the book's claims about peers are tested).
"""
import shlex
from configparser import ConfigParser

import setuptools

cfg = ConfigParser(delimiters=["="])
cfg.read("settings.ini", encoding="utf-8")
cfg = cfg["DEFAULT"]


def _reqs(key):
    return shlex.split(cfg.get(key, ""))


setuptools.setup(
    name=cfg["lib_name"],
    version=cfg["version"],
    description=cfg["description"],
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    author=cfg["author"],
    author_email=cfg["author_email"],
    license="Apache-2.0",
    url=cfg["git_url"],
    project_urls={"Documentation": cfg["doc_host"] + cfg["doc_baseurl"], "Source": cfg["git_url"]},
    classifiers=[
        "Development Status :: 3 - Alpha",
        "Intended Audience :: Science/Research",
        "License :: OSI Approved :: Apache Software License",
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Image Recognition",
        "Topic :: Scientific/Engineering :: Information Analysis",
    ],
    keywords=cfg["keywords"].split(),
    python_requires=">=" + cfg["min_python"],
    packages=setuptools.find_packages(include=[cfg["lib_name"], cfg["lib_name"] + ".*"]),
    include_package_data=True,
    package_data={cfg["lib_name"]: ["answers/*.json"]},   # the exercises' answer keys (data, not generated code)
    install_requires=_reqs("requirements"),
    # dev: notebooks, tests, docs; plots / widgets / dask: what those modules need beyond the core
    extras_require={**{name: _reqs(f"{name}_requirements") for name in ("plots", "widgets", "dask", "torch", "peers")},
                    "dev": _reqs("dev_requirements") + _reqs("peers_requirements")},
    entry_points={
        "console_scripts": cfg["console_scripts"].split(),
        "nbdev": [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"],
    },
    zip_safe=False,
)
