"""Vaults in languages written without spaces (Chinese, Japanese), and questions beyond English and
Spanish: keyword terms, the index's record of them, time and connection words, the model advice."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_VAULT
from vask_server.core.cjk import (
    CJK,
    SIMPLE,
    cjk_content,
    cjk_terms,
    cjk_words,
    coverage,
    has_cjk,
    keyword_text,
    written_in_cjk,
)
from vask_server.core.connect import find_connection
from vask_server.core.language import looks_english, not_english_share
from vask_server.core.model_languages import language_advice, reads_only_english
from vask_server.core.retrieve import content_words, covers_query, holds_quoted, named_terms, quoted_terms
from vask_server.core.timeexpr import read_time
from vask_server.services.context import index_status, open_services
from vask_server.services.doctor import _language_check

TODAY = date(2026, 12, 5)  # a Saturday

# -- cutting text into keyword terms ---------------------------------------------------------------


def test_cjk_runs_become_pairs_and_characters_and_other_words_stay_whole() -> None:
    assert cjk_terms("状态栏") == " 状态 态栏 状 态 栏 "
    cut = cjk_terms("从NameSilo国外大厂买域名 running")
    assert "NameSilo" in cut.split() and "running" in cut.split()  # English words whole
    assert {"国外", "外大", "大厂", "域名", "从", "买"} <= set(cut.split())
    assert cjk_terms("ステータスバー").split()[:2] == ["ステ", "テー"]
    assert cjk_terms("书") == " 书 "


def test_text_without_cjk_is_never_changed() -> None:
    english = "Feed the starter at 1:5:5 — the night before; [[Sourdough]] #cooking"
    assert cjk_terms(english) == english
    assert keyword_text(english, CJK) == english and keyword_text("状态栏", SIMPLE) == "状态栏"
    assert cjk_words("The Mom Test") == ["the", "mom", "test"]


def test_a_vault_is_cjk_when_a_note_is_written_mostly_in_chinese_or_japanese() -> None:
    assert written_in_cjk(["An English note.", "这是一篇用中文写的笔记，里面有一点 English。"])
    assert written_in_cjk(["紅葉の時期に二泊三日で京都へ。"])
    assert not written_in_cjk(["An English note that quotes one word, 福贵, and goes on in English for a while."])
    assert not written_in_cjk([])


def test_what_a_cjk_question_asks_about_and_how_much_of_it_a_passage_holds() -> None:
    units = cjk_content("扫描仪用的什么分辨率？")
    assert {"扫", "描", "仪", "分", "辨", "率"} <= units and not units & {"的", "什", "么", "用"}
    assert cjk_content("カレーのレシピ") == {"カレー", "レシピ"}  # katakana words whole, hiragana nothing
    assert coverage(units, "扫描仪：分辨率设 600 dpi") == 1.0
    assert coverage(cjk_content("红烧肉怎么做"), "把爸妈家里的老相册全部扫描存档") == 0.0
    assert not has_cjk("plain English")
    # the names it asks about in another script, whole and lower-cased; numbers and short words are not names
    assert named_terms("Linux上怎么用logrotate按天切割nginx的日志？保留 30 天") == {"linux", "logrotate", "nginx"}
    assert named_terms("用 Win10 的 ID 登录") == {"win10"}
    assert named_terms("红烧肉怎么做") == set()


# -- vask's own word matching ----------------------------------------------------------------------


def test_exact_match_helpers_read_cjk_by_pairs_and_find_english_words_inside_chinese() -> None:
    assert content_words("录音机") == {"录音", "音机"}
    assert content_words("What did I write about sourdough?") == {"write", "sourdough"}
    row = {"title": "家庭相册数字化", "heading": "设备和软件", "text": "用 Lightroom 整理照片，扫描仪借了同事的"}
    assert covers_query(row, "扫描仪") and covers_query(row, "相册")
    assert covers_query({"title": "", "heading": "", "text": "在Lightroom里整理"}, "lightroom")
    assert not covers_query(row, "红烧肉")
    assert quoted_terms("「紅葉」の時期はいつ？") == ("紅葉",)
    assert holds_quoted({"title": "", "heading": "", "text": "東福寺の紅葉が見頃"}, ["紅葉"])


# -- the models and the notes' language -------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "english_only"),
    [
        ("all-minilm", True),
        ("all-minilm:l6-v2", True),
        ("mxbai-embed-large:335m", True),
        ("nomic-embed-text", True),
        ("snowflake-arctic-embed:335m", True),
        ("bge-m3", False),
        ("bge-m3:567m", False),
        ("jeffh/intfloat-multilingual-e5-large:f16", None),
        ("multilingual-e5-large", False),
        ("paraphrase-multilingual", False),
        ("snowflake-arctic-embed2", False),
        ("granite-embedding:278m", False),
        ("granite-embedding:30m", True),
        ("my-own-model", None),
    ],
)
def test_which_models_read_only_english(model: str, english_only: bool | None) -> None:
    assert reads_only_english(model) is english_only


def test_notes_not_in_english_are_told_apart() -> None:
    assert looks_english("What I learned about sourdough this week: feed the starter at night.")
    assert not looks_english("这是一篇用中文写的笔记。")
    assert not looks_english(
        "Was ich diese Woche gelernt habe: der Teig ist nicht fertig und ich bin mit dem Ofen unzufrieden."
    )
    assert not looks_english("Le pain est prêt et je suis content, mais la pâte est pour demain.")
    assert not_english_share(["An English note about the week.", "中文笔记", "日本語のメモです"]) == pytest.approx(
        2 / 3
    )
    assert language_advice("all-minilm", 0.9) is not None and "bge-m3" in str(language_advice("all-minilm", 0.9))
    assert language_advice("bge-m3", 0.9) is None and language_advice("all-minilm", 0.2) is None
    assert language_advice("all-minilm", None) is None


# -- time and connection words beyond English and Spanish ---------------------------------------------


@pytest.mark.parametrize(
    ("question", "start", "end", "left"),
    [
        ("上个月我读了什么书？", date(2026, 11, 1), date(2026, 11, 30), "我读了什么书？"),
        ("最近三个月的项目进展", date(2026, 9, 5), TODAY, "的项目进展"),
        ("去年的日记", date(2025, 1, 1), date(2025, 12, 31), "的日记"),
        ("今年写了什么", date(2026, 1, 1), TODAY, "写了什么"),
        ("上周开会讨论了什么", date(2026, 11, 23), date(2026, 11, 29), "开会讨论了什么"),
        ("昨天的想法", date(2026, 12, 4), date(2026, 12, 4), "的想法"),
        ("三个月前的想法", date(2026, 9, 1), date(2026, 9, 30), "的想法"),
        ("2025年3月的读书笔记", date(2025, 3, 1), date(2025, 3, 31), "的读书笔记"),
        ("3月14日的日记", date(2026, 3, 14), date(2026, 3, 14), "的日记"),
        ("先月の会議メモ", date(2026, 11, 1), date(2026, 11, 30), "の会議メモ"),
        ("去年の旅行", date(2025, 1, 1), date(2025, 12, 31), "の旅行"),
        ("昨日の日記", date(2026, 12, 4), date(2026, 12, 4), "の日記"),
        ("ここ2週間で読んだ本", date(2026, 11, 21), TODAY, "で読んだ本"),
        ("Was habe ich letzten Monat gelesen?", date(2026, 11, 1), date(2026, 11, 30), "Was habe ich gelesen?"),
        ("Notizen von letztes Jahr", date(2025, 1, 1), date(2025, 12, 31), "Notizen von"),
        ("Was lief in den letzten 3 Monaten?", date(2026, 9, 5), TODAY, "Was lief?"),
        ("Qu'ai-je lu le mois dernier ?", date(2026, 11, 1), date(2026, 11, 30), "Qu'ai-je lu?"),
        ("mes notes de l’année dernière", date(2025, 1, 1), date(2025, 12, 31), "mes notes de"),
        ("il y a deux semaines", date(2026, 11, 16), date(2026, 11, 22), ""),
    ],
)
def test_time_words_of_other_languages(question: str, start: date, end: date, left: str) -> None:
    found = read_time(question, TODAY)
    assert found is not None and found.range is not None
    assert (found.range.start, found.range.end, found.text) == (start, end, left)


def test_recently_in_other_languages_and_words_that_name_no_time() -> None:
    for question in ("最近读了什么", "Was habe ich kürzlich gelesen?", "qu'ai-je lu récemment ?", "最近のメモ"):
        found = read_time(question, TODAY)
        assert found is not None and found.recent and found.range is not None and found.range.end == TODAY
    # German "hier" is "here", not French "yesterday"; a Chinese question without time words has none
    assert read_time("Hier ist mein Plan für das Projekt", TODAY) is None
    assert read_time("我的体重是多少", TODAY) is None
    assert read_time("What is 上海 like?", TODAY) is None


@pytest.mark.parametrize(
    ("question", "phrase", "seed", "left"),
    [
        ("哪些笔记与[[读书笔记 - 活着]]相关？", "相关", "读书笔记 - 活着", "哪些笔记？"),
        ("和[[家庭相册数字化]]有关的想法", "有关", "家庭相册数字化", "的想法"),
        ("[[京都旅行メモ]]に関連するノートは？", "に関連する", "京都旅行メモ", "ノートは？"),
        ("Welche Notizen sind verbunden mit [[Projekt]]?", "verbunden mit", "Projekt", "Welche Notizen sind?"),
        ("Quelles notes sont liées à [[Projet]] ?", "liées à", "Projet", "Quelles notes sont?"),
    ],
)
def test_connection_phrases_of_other_languages(question: str, phrase: str, seed: str, left: str) -> None:
    found = find_connection(question)
    assert found is not None and (found.phrase, found.seed_name, found.text) == (phrase, seed, left)


def test_this_note_in_other_languages_and_a_scope_that_is_not_a_connection() -> None:
    for question in (
        "有什么和这篇笔记有关",
        "このノートに似たもの",
        "Was passt zu dieser Notiz?",
        "Qu'est-ce qui est lié à cette note ?",
    ):
        found = find_connection(question)
        assert found is not None and found.open_note, question
    assert find_connection("在[[读书笔记 - 活着]]里我写了什么") is None  # "in [[X]]": a scope


# -- the index: chosen per vault, recorded, rebuilt on a change -------------------------------------------


def _cjk_vault(tmp_path: Path) -> Path:
    root = tmp_path / "cjk"
    root.mkdir()
    for name in ("读书笔记 - 活着.md", "日记 - 杭州周末.md"):
        shutil.copy(SAMPLE_VAULT / "02 Areas" / "中文" / name, root / name)
    shutil.copy(SAMPLE_VAULT / "00 Inbox" / "京都旅行メモ.md", root / "京都旅行メモ.md")
    shutil.copy(SAMPLE_VAULT / "01 Projects" / "家庭相册数字化.md", root / "家庭相册数字化.md")
    (root / "Sourdough.md").write_text("# Sourdough\n\nFeed the starter the night before.\n", encoding="utf-8")
    return root


async def _keyword_paths(services, text: str) -> list[str]:  # type: ignore[no-untyped-def]
    index = services.searcher.active()
    rows = await services.store.text_search(index.suffix, index.dimension, keyword_text(text, index.keyword_terms), 5)
    return [row["path"] for row in rows]


async def test_a_chinese_vault_gets_cjk_terms_and_its_words_are_found(fake_ollama, tmp_path, settings_for):
    vault = _cjk_vault(tmp_path)
    async with open_services(settings_for(vault)) as services:
        await services.indexer.sync()
        meta = services.store.read_meta()
        assert meta.active is not None and meta.active["keyword_terms"] == CJK
        assert meta.active["not_english"] == pytest.approx(0.8)
        assert (await _keyword_paths(services, "福贵"))[0] == "读书笔记 - 活着.md"
        assert (await _keyword_paths(services, "片儿川"))[0] == "日记 - 杭州周末.md"
        assert (await _keyword_paths(services, "紅葉"))[0] == "京都旅行メモ.md"
        assert (await _keyword_paths(services, "Lightroom"))[0] == "家庭相册数字化.md"  # English inside Chinese
        assert (await _keyword_paths(services, "starter"))[0] == "Sourdough.md"
        result = await services.searcher.search_question(
            "扫描仪用的什么分辨率？", today=TODAY, top_k=3, min_similarity=0.0
        )
        assert result.hits and result.hits[0].path == "家庭相册数字化.md"


async def test_a_change_of_keyword_terms_rewrites_the_keyword_text_without_embedding(
    fake_ollama, tmp_path, settings_for
):
    vault = _cjk_vault(tmp_path)
    async with open_services(settings_for(vault)) as services:
        await services.indexer.sync()
    async with open_services(settings_for(vault, keyword_tokenizer="simple")) as services:
        report = await services.indexer.sync()
        assert report.changed == 5 and report.chunks_embedded == 0  # every row rewritten, vectors reused
        assert services.store.read_meta().active["keyword_terms"] == SIMPLE  # type: ignore[index]
        assert await _keyword_paths(services, "片儿川") == []  # a clause is one "word" again
    async with open_services(settings_for(vault, keyword_tokenizer="auto")) as services:
        await services.indexer.sync()  # auto keeps what the index records
        assert services.store.read_meta().active["keyword_terms"] == SIMPLE  # type: ignore[index]
        full = await services.indexer.sync(force=True)  # `--full` reads the notes again
        assert full.chunks_embedded == 0
        assert services.store.read_meta().active["keyword_terms"] == CJK  # type: ignore[index]
        assert (await _keyword_paths(services, "福贵"))[0] == "读书笔记 - 活着.md"


async def test_an_english_vault_keeps_the_simple_index_and_its_fingerprint(fake_ollama, small_vault, settings_for):
    async with open_services(settings_for(small_vault)) as services:
        await services.indexer.sync()
        meta = services.store.read_meta()
        assert meta.active is not None and meta.active["keyword_terms"] == SIMPLE and meta.active["not_english"] == 0
        assert "keyword_terms" not in json.loads(meta.extra["chunking"])  # indexes built before are not redone
        status = await index_status(services)
        assert status["language"] == {"keyword_terms": SIMPLE, "not_english": 0.0, "advice": None}


async def test_an_english_only_model_ranks_cjk_questions_by_keywords_and_declines_what_no_note_holds(
    fake_ollama, tmp_path, settings_for
):
    fake_ollama.fake.embed_models["all-minilm"] = 32
    vault = _cjk_vault(tmp_path)
    async with open_services(settings_for(vault, embed_model="all-minilm")) as services:
        await services.indexer.sync()

        async def ask(question: str):  # type: ignore[no-untyped-def]
            return await services.searcher.search_question(question, today=TODAY, top_k=3, min_similarity=0.0)

        for question, path in (("福贵最后剩下了什么？", "读书笔记 - 活着.md"), ("东福寺的紅葉", "京都旅行メモ.md")):
            found = await ask(question)
            assert not found.declined and found.hits[0].path == path, question
        assert (await ask("红烧肉怎么做")).declined
        assert (await ask("我的护照号码")).declined
        # A name in another script: answered where a note holds it, declined where none does, though
        # the rest of the question is the project note's own words.
        named = await ask("扫描老照片以后用 Lightroom 怎么整理？")
        assert not named.declined and named.hits[0].path == "家庭相册数字化.md"
        assert (await ask("扫描老照片以后用 Darktable 怎么整理？")).declined
        status = await index_status(services)
        assert status["language"]["advice"] and "bge-m3" in status["language"]["advice"]
    check = _language_check(settings_for(vault, embed_model="all-minilm"), {})
    assert check.level == "warn" and check.ok and "ollama pull bge-m3" in check.fix  # (advice: vask still works)


def test_brackets_around_nothing_name_no_note() -> None:
    """A question about the link syntax itself ("names not in [[ ]]") names no note to search in."""
    from vask_server.core.scope import find_mentions

    question = "ほかのノートで名前は書いてあるのに [[ ]] で囲まれていない箇所"
    assert find_mentions(question)[0] == [] and find_connection("what relates to [[ ]]?") is None
