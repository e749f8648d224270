"""Package-index metadata on repository cards, and the Domain families' repository kinds (issue 33)."""

from __future__ import annotations

import numpy as np

from swetrain.label.adapters import Evidence
from swetrain.label.cards import PACKAGED_CARDS, RepoCard, read_cards_file
from swetrain.label.features import Featurizer, card_sentences, repository_kinds
from swetrain.label.package_meta import from_npm, from_pypi, names_repository, with_package

PYPI_INFO = {  # the shape of https://pypi.org/pypi/<name>/json's "info" (fields the card reads)
    "name": "tinyvid", "version": "1.2.0", "summary": "Download videos from many sites",
    "keywords": "video, downloader ,youtube", "home_page": None,
    "project_urls": {"Source": "https://github.com/acme/tinyvid", "Docs": "https://tinyvid.example/docs"},
    "classifiers": ["Development Status :: 5 - Production/Stable", "Topic :: Multimedia :: Video",
                    "Topic :: Multimedia :: Sound/Audio", "License :: OSI Approved :: MIT License"],
    "requires_dist": ["requests>=2.31", "websockets; python_version >= '3.9'", "pytest; extra == 'test'"],
}


def test_pypi_info_becomes_package_metadata_and_topics_reach_the_embedded_text() -> None:
    package, deps = from_pypi(PYPI_INFO)
    assert package["keywords"] == ["video", "downloader", "youtube"]
    assert package["classifiers"] == ["Topic :: Multimedia :: Video", "Topic :: Multimedia :: Sound/Audio"]  # no status/licence
    assert deps == ("requests", "websockets")  # extras are optional: not a dependency
    card = with_package(RepoCard(repo="acme/tinyvid", description="tinyvid fetches media.", source="cards:x"), package, deps, "pypi:tinyvid==1.2.0")
    assert card.source == "cards:x+pypi:tinyvid==1.2.0" and card.topics() == ["Video", "Sound/Audio"]
    assert card.about() == "tinyvid fetches media. Download videos from many sites keywords: video, downloader, youtube topics: Video, Sound/Audio"
    assert card.sha256() != RepoCard(repo="acme/tinyvid", description="tinyvid fetches media.").sha256()


def test_npm_document_becomes_package_metadata() -> None:
    doc = {"name": "tinydate", "version": "2.0.1", "description": "Parse and format dates", "keywords": ["date", "time"],
           "dependencies": {"Left-Pad": "^1"}, "repository": {"type": "git", "url": "git+https://github.com/acme/tinydate.git"}}
    package, deps = from_npm(doc)
    assert package == {"name": "tinydate", "summary": "Parse and format dates", "keywords": ["date", "time"]} and deps == ("left-pad",)
    assert names_repository(doc, "acme/tinydate")


def test_a_package_counts_only_when_its_urls_name_the_repository() -> None:
    assert names_repository(PYPI_INFO, "acme/tinyvid")
    assert names_repository(PYPI_INFO, "oldowner/tinyvid")  # moved to another owner: same repository name
    assert not names_repository(PYPI_INFO, "acme/tinyvideo")
    assert not names_repository({"home_page": "https://bitbucket.org/someone/tinyvid"}, "acme/tinyvid")  # a namesake package
    assert not names_repository({}, "acme/tinyvid")


def test_packaged_cards_carry_index_metadata_with_its_source() -> None:
    table = read_cards_file(PACKAGED_CARDS)
    with_pkg = [c for c in table.values() if c is not None and c.package]
    assert len(with_pkg) >= 100
    assert all(any(f"{pre}:" in c.source for pre in ("pypi", "npm", "debian")) for c in with_pkg)
    assert any(c.topics() for c in with_pkg)


def test_repository_kinds_split_at_top_level_commas(taxonomy) -> None:
    assert repository_kinds("a, b (c, d), e.") == ["a", "b (c, d)", "e"]
    fams = taxonomy.families("domain")
    assert all(f.repositories for f in fams.values())  # every Domain family names its kinds of repository
    assert any("date and time" in k for k in repository_kinds(fams["lang_runtime"].repositories))


def test_repository_kinds_pull_a_card_towards_their_family(taxonomy, embedder, tmp_path) -> None:
    """A date/time library's card: its rule-channel similarity is highest for lang_runtime, which
    names that kind of repository, and it is higher than without the kinds."""
    feat = Featurizer(taxonomy, embedder=embedder, cache_dir=tmp_path)
    card = RepoCard(repo="acme/when", description="Tiny library to parse, validate, manipulate and format dates and times.")
    ev = Evidence(kind="task", instance_id="acme__when-1", repo="acme/when", statement="format() ignores the locale", card=card)
    fams = feat.domain_families
    rule = feat._card_channels([ev])[0, 1 : 1 + len(fams)]
    assert fams[int(np.argmax(rule))] == "lang_runtime"
    feat._kind_protos = {}  # the same channel without any repository kinds
    assert feat._card_channels([ev])[0, 1 + fams.index("lang_runtime")] < rule[fams.index("lang_runtime")]


def test_card_sentences_split_after_sentence_ends_and_line_breaks() -> None:
    text = ("Welcome to Tubely! We are glad you found us and hope you enjoy using it every day.\n"
            "Tubely is a command-line program to download videos from YouTube and many other sites. Thanks")
    assert card_sentences(text) == ["We are glad you found us and hope you enjoy using it every day.",  # "Welcome to Tubely!": too short
                                     "Tubely is a command-line program to download videos from YouTube and many other sites."]
    assert len(card_sentences(" ".join(f"Sentence number {i} of a long README." for i in range(30)))) == 12


def test_sentence_channel_finds_the_sentence_that_names_the_kind(taxonomy, embedder, tmp_path) -> None:
    """A README whose one sentence says what the repository is, among generic ones: the sentence
    channel (best single sentence vs the family's records and kinds) ranks desktop_gui first and
    scores it higher than the whole-text rule channel, where the other sentences dilute it."""
    from swetrain.label.learn import CARD_CHANNELS

    feat = Featurizer(taxonomy, embedder=embedder, cache_dir=tmp_path)
    text = ("Make something great. Widgetry is a toolkit for building native desktop GUI applications with windows, "
            "buttons and menus. It is released under the MIT license and maintained by volunteers. Join our community "
            "chat to ask questions and share what you built.")
    card = RepoCard(repo="acme/widgetry", description=text)
    ev = Evidence(kind="task", instance_id="acme__widgetry-1", repo="acme/widgetry", statement="button label is cut off", card=card)
    fams = feat.domain_families
    row = feat._card_channels([ev])[0]
    channel = {ch: row[1 + i * len(fams) : 1 + (i + 1) * len(fams)] for i, ch in enumerate(CARD_CHANNELS)}
    sent, rule = channel["card_zs_sent"], channel["card_zs_rule"]
    gui = fams.index("desktop_gui")
    assert fams[int(np.argmax(sent))] == "desktop_gui"
    assert sent[gui] > rule[gui]
    no_card = feat._card_channels([Evidence(kind="task", instance_id="acme__w-2", repo="acme/w", statement="button label is cut off")])[0]
    assert no_card[0] == 0 and not no_card[1 + 3 * len(fams) :].any()  # no card: no sentences


def test_debian_stanza_becomes_package_metadata() -> None:
    from swetrain.label.package_meta import from_debian, parse_debian

    text = ("Package: libtinyjson-dev\nVersion: 3.0.1-1\nDepends: libc6 (>= 2.34), libtinyjson3 (= 3.0.1-1)\n"
            "Homepage: https://github.com/acme/tinyjson\nDescription: Parsing JSON quickly (development)\n"
            " This package contains the headers.\n .\n More prose.\n\nPackage: other\nVersion: 1\n")
    fields = parse_debian(text)
    assert fields["Package"] == "libtinyjson-dev" and fields["Version"] == "3.0.1-1"  # the first stanza only
    package, deps = from_debian(fields)
    assert package == {"name": "libtinyjson-dev", "summary": "Parsing JSON quickly (development)", "keywords": []}  # not the long prose
    assert deps == ("libc6", "libtinyjson3") and names_repository(fields, "acme/tinyjson")
