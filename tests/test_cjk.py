"""Vaults in languages written without spaces (Chinese, Japanese), and questions beyond English and
Spanish: keyword terms, the index's record of them, time and connection words, the model advice."""

from __future__ import annotations

import asyncio
import json
import shutil
from dataclasses import replace
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import SAMPLE_VAULT
from vask_server.adapters.calibration import CALIBRATION_FILE
from vask_server.adapters.meta import IndexRecord
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
from vask_server.core.keyword_choice import (
    SAMPLE_NOTES,
    KeywordChoice,
    choose_keyword_terms,
    sample_paths,
    spread,
)
from vask_server.core.language import looks_english, not_english_share
from vask_server.core.model_languages import language_advice, reads_only_english
from vask_server.core.question import Question
from vask_server.core.retrieve import content_words, covers_query, holds_quoted, named_terms, quoted_terms
from vask_server.core.time.expr import read_time
from vask_server.services.context import index_status, open_services
from vask_server.services.doctor import _language_checks

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
        ("jeffh/intfloat-multilingual-e5-large:f16", False),
        ("multilingual-e5-large", False),
        ("intfloat/multilingual-e5-small", False),
        ("text-embedding-multilingual-e5-large-instruct", False),
        ("e5-base-v2", True),
        ("Snowflake/snowflake-arctic-embed-l-v2.0", False),
        ("Snowflake/snowflake-arctic-embed-m-v1.5", True),
        ("BAAI/bge-large-zh-v1.5", False),
        ("BAAI/bge-small-en-v1.5", True),
        ("ibm-granite/granite-embedding-278m-multilingual", False),
        ("nomic-embed-text-v2-moe", False),
        ("qwen3-embedding:0.6b", False),
        ("embeddinggemma", False),
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
    rows = await services.store.tables(index).text_search(keyword_text(text, index.keyword_terms), 5)
    return [row["path"] for row in rows]


async def test_a_chinese_vault_gets_cjk_terms_and_its_words_are_found(fake_ollama, tmp_path, settings_for):
    vault = _cjk_vault(tmp_path)
    async with open_services(settings_for(vault)) as services:
        await services.indexer.sync()
        meta = services.store.read_meta()
        assert meta.active is not None and meta.active.keyword_terms == CJK
        assert meta.active.not_english == pytest.approx(0.8)
        assert (await _keyword_paths(services, "福贵"))[0] == "读书笔记 - 活着.md"
        assert (await _keyword_paths(services, "片儿川"))[0] == "日记 - 杭州周末.md"
        assert (await _keyword_paths(services, "紅葉"))[0] == "京都旅行メモ.md"
        assert (await _keyword_paths(services, "Lightroom"))[0] == "家庭相册数字化.md"  # English inside Chinese
        assert (await _keyword_paths(services, "starter"))[0] == "Sourdough.md"
        result = await services.searcher.search_question(
            Question("扫描仪用的什么分辨率？", today=TODAY, top_k=3, min_similarity=0.0)
        )
        assert result.hits and result.hits[0].path == "家庭相册数字化.md"


async def test_a_change_of_keyword_terms_cuts_the_stored_text_anew_without_reading_or_embedding(
    fake_ollama, tmp_path, settings_for
):
    vault = _cjk_vault(tmp_path)
    async with open_services(settings_for(vault)) as services:
        await services.indexer.sync()
    fake_ollama.fake.reset_counters()
    async with open_services(settings_for(vault, keyword_tokenizer="simple")) as services:
        report = await services.indexer.sync()
        assert report.changed == 0 and report.chunks_embedded == 0  # no note read again: the rows are cut anew
        assert services.store.read_meta().searched().keyword_terms == SIMPLE
        assert await _keyword_paths(services, "片儿川") == []  # a clause is one "word" again
        assert (await _keyword_paths(services, "starter"))[0] == "Sourdough.md"
    async with open_services(settings_for(vault, keyword_tokenizer="auto")) as services:
        report = await services.indexer.sync()  # a whole sync under auto reads the notes again, and chooses
        assert report.changed == 0 and report.chunks_embedded == 0
        assert services.store.read_meta().searched().keyword_terms == CJK
        assert (await _keyword_paths(services, "福贵"))[0] == "读书笔记 - 活着.md"
        assert (await _keyword_paths(services, "片儿川"))[0] == "日记 - 杭州周末.md"
    assert fake_ollama.fake.embed_inputs == 2  # each process asks the model its dimension once: no passage


def _chinese(n: int, dish: str = "片儿川面条") -> str:
    return (
        f"# 笔记 {n}\n\n今天去杭州出差，中午吃了一碗{dish}，味道很好。下午讨论了项目的预算和时间安排，"
        "大家都同意下周再开一次会，把剩下的问题都解决。\n"
    )


def _english(n: int) -> str:
    return f"# Note {n}\n\nThoughts on gardening, tea and long walks, written down on day {n} of the year.\n"


def test_chinese_notes_named_after_every_english_one_still_get_cjk_terms(cli_env, tmp_path, capsys, settings_for):
    """300 English notes and 50 Chinese ones whose names sort after them all: a sample of the vault's
    first paths read English notes only, and a Chinese word was then found by no keyword search."""
    from vask_server.cli.command import main

    vault = tmp_path / "mixed"
    vault.mkdir()
    for n in range(300):
        (vault / f"Note {n:03d}.md").write_text(_english(n), encoding="utf-8")
    for n in range(50):
        dish = "龙井虾仁和东坡肉" if n == 42 else "片儿川面条"
        (vault / f"笔记 {n:02d}.md").write_text(_chinese(n, dish), encoding="utf-8")
    assert main(["index", "--vault", str(vault), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["status", "--vault", str(vault), "--json"]) == 0
    language = json.loads(capsys.readouterr().out)["language"]
    assert language["keyword_terms"] == CJK
    assert language["keyword_sample"] == {"setting": "auto", "notes_read": 350, "cjk_notes": 50}
    reason = "50 of the 350 notes read are written mostly in Chinese or Japanese"
    assert language["keyword_reason"] == reason
    assert main(["status", "--vault", str(vault)]) == 0
    assert f"keywords:   cjk ({reason})" in capsys.readouterr().out

    async def found() -> list[str]:
        async with open_services(settings_for(vault)) as services:  # (the same index folder as the CLI's)
            return await _keyword_paths(services, "龙井虾仁")

    assert asyncio.run(found())[0] == "笔记 42.md"


async def test_a_vault_whose_mix_changes_switches_its_keyword_terms_and_embeds_nothing_again(
    fake_ollama, tmp_path, settings_for
):
    """An English note holding a Chinese clause is found by a word of it only once the vault is cut
    the CJK way: when Chinese notes come, and no longer when they go. Its vectors stay as they were."""
    vault = tmp_path / "changing"
    vault.mkdir()
    for n in range(20):
        (vault / f"Note {n:02d}.md").write_text(_english(n), encoding="utf-8")
    travel = "# Travel\n\nIn Hangzhou we had 杭州的片儿川面条很好吃 at a small place by the lake, worth the trip.\n"
    (vault / "Travel.md").write_text(travel, encoding="utf-8")
    settings = settings_for(vault)
    async with open_services(settings) as services:
        await services.indexer.sync()
        assert services.store.read_meta().searched().keyword_terms == SIMPLE
        assert "Travel.md" not in await _keyword_paths(services, "片儿川")
        tables = services.store.tables(services.searcher.active())
        before = await tables.all_chunk_rows(["id", "vector"], "path = 'Travel.md'")

        for n in range(3):  # the mix changes: Chinese notes come
            (vault / f"日记 {n}.md").write_text(_chinese(n), encoding="utf-8")
        fake_ollama.fake.reset_counters()
        report = await services.indexer.sync()
        new_rows = await tables.all_chunk_rows(["id"], "path LIKE '日记%'")
        assert fake_ollama.fake.embed_inputs == report.chunks_embedded == new_rows.num_rows  # only the new notes'
        assert services.store.read_meta().searched().keyword_terms == CJK
        assert "Travel.md" in await _keyword_paths(services, "片儿川")  # its stored text, cut anew
        after = await tables.all_chunk_rows(["id", "vector"], "path = 'Travel.md'")
        assert after.sort_by("id").equals(before.sort_by("id"))  # the same rows and vectors
        assert (await index_status(services))["language"]["keyword_reason"] == (
            "3 of the 24 notes read are written mostly in Chinese or Japanese"
        )

        for n in range(3):  # ... and go
            (vault / f"日记 {n}.md").unlink()
        fake_ollama.fake.reset_counters()
        await services.indexer.sync()
        assert fake_ollama.fake.embed_inputs == 0
        assert services.store.read_meta().searched().keyword_terms == SIMPLE
        assert "Travel.md" not in await _keyword_paths(services, "片儿川")
        assert set(await _keyword_paths(services, "Hangzhou")) == {"Travel.md"}
        assert (await index_status(services))["language"]["keyword_reason"] == (
            "none of the 21 notes read is written mostly in Chinese or Japanese"
        )


async def test_a_sync_of_a_few_notes_cuts_them_as_the_index_does_until_a_whole_sync_decides(
    fake_ollama, tmp_path, settings_for
):
    vault = _cjk_vault(tmp_path)
    async with open_services(settings_for(vault, keyword_tokenizer="simple")) as services:
        await services.indexer.sync()
    async with open_services(settings_for(vault, keyword_tokenizer="cjk")) as services:
        edited = "# Sourdough\n\nFeed the starter 杭州的片儿川面条 the night before.\n"
        (vault / "Sourdough.md").write_text(edited, "utf-8")
        await services.indexer.sync(["Sourdough.md"])  # (an edit's sync, before any whole one)
        assert services.store.read_meta().searched().keyword_terms == SIMPLE
        assert await _keyword_paths(services, "片儿川") == []  # every row cut one way: the index's
        await services.indexer.sync()
        assert services.store.read_meta().searched().keyword_terms == CJK
        assert {"Sourdough.md", "日记 - 杭州周末.md"} <= set(await _keyword_paths(services, "片儿川"))
        reason = (await index_status(services))["language"]["keyword_reason"]
        assert reason == "set by VASK_KEYWORD_TOKENIZER=cjk"


def test_the_sample_is_spread_over_the_whole_vault_and_reads_the_notes_named_in_cjk() -> None:
    english = [f"Note {n:06d}.md" for n in range(100_000)]
    chinese = [f"Zeta/{n} 笔记.md" for n in range(30)]  # few: the even steps pass over them
    chosen = sample_paths(english + chinese)
    assert len(chosen) == SAMPLE_NOTES + 30 and set(chinese) <= set(chosen)
    picked = [path for path in chosen if path in set(english)]
    assert picked[0] == "Note 000000.md" and picked[-1] >= "Note 099950.md"  # from the first path to the last
    steps = {int(a[5:11]) - int(b[5:11]) for a, b in zip(picked[1:], picked, strict=False)}
    assert steps <= {50, 51}  # evenly
    assert sample_paths(english[:350]) == english[:350]  # a small vault: every note
    assert spread(list("abcdefghij"), 5) == list("acegi")


def test_the_choice_says_why_and_is_made_again_under_another_setting_or_rule() -> None:
    choice = choose_keyword_terms("auto", 350, 50)
    mostly = "written mostly in Chinese or Japanese"
    assert choice.terms == CJK and choice.reason() == f"50 of the 350 notes read are {mostly}"
    assert choose_keyword_terms("auto", 2, 1).reason() == f"1 of the 2 notes read is {mostly}"
    assert choose_keyword_terms("auto", 350, 0).terms == SIMPLE
    assert choose_keyword_terms("simple", 350, 50).reason() == "set by VASK_KEYWORD_TOKENIZER=simple"
    index = {"model": "m", "dimension": 4, "suffix": "s"}
    active = {**index, "keyword_terms": CJK, "keyword_choice": choice.to_record(), "not_english": 0.1}
    assert KeywordChoice.recorded(active) == choice and choice.holds_for("auto") and not choice.holds_for("cjk")
    record = IndexRecord.from_json(active, complete=True)
    assert record is not None and record.keyword_choice == choice
    assert record.language("auto") is not None and record.language("simple") is None
    older = IndexRecord.from_json({**active, "keyword_choice": {**choice.to_record(), "rule": 1}}, complete=True)
    assert older is not None and older.language("auto") is None  # (a choice made by an older rule is made again)
    unrecorded = IndexRecord.from_json({**index, "keyword_terms": SIMPLE, "not_english": 0.0}, complete=True)
    assert unrecorded is not None and unrecorded.language("auto") is None  # (none recorded)


async def test_an_english_vault_keeps_the_simple_index_and_its_fingerprint(fake_ollama, small_vault, settings_for):
    async with open_services(settings_for(small_vault)) as services:
        await services.indexer.sync()
        meta = services.store.read_meta()
        assert meta.active is not None and meta.active.keyword_terms == SIMPLE and meta.active.not_english == 0
        assert "keyword_terms" not in json.loads(meta.extra["chunking"])  # indexes built before are not redone
        status = await index_status(services)
        assert status["language"] == {
            "keyword_terms": SIMPLE,
            "keyword_reason": f"none of the {status['notes']} notes read is written mostly in Chinese or Japanese",
            "keyword_sample": {"setting": "auto", "notes_read": status["notes"], "cjk_notes": 0},
            "not_english": 0.0,
            "advice": None,
        }


async def test_an_english_only_model_ranks_cjk_questions_by_keywords_and_declines_what_no_note_holds(
    fake_ollama, tmp_path, settings_for
):
    fake_ollama.fake.embed_models["all-minilm"] = 32
    vault = _cjk_vault(tmp_path)
    async with open_services(settings_for(vault, embed_model="all-minilm")) as services:
        await services.indexer.sync()

        async def ask(question: str):  # type: ignore[no-untyped-def]
            return await services.searcher.search_question(Question(question, today=TODAY, top_k=3, min_similarity=0.0))

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
    check, keywords = _language_checks(settings_for(vault, embed_model="all-minilm"), {})
    assert check.level == "warn" and check.ok and "ollama pull bge-m3" in check.fix  # (advice: vask still works)
    assert keywords.level == "ok" and keywords.detail == (
        "cjk (Chinese and Japanese cut into pairs): 4 of the 5 notes read are written mostly in Chinese or Japanese"
    )


def test_doctor_chooses_as_a_sync_does_and_says_when_the_index_cuts_otherwise(tmp_path, settings_for) -> None:
    from vask_server.adapters.meta import IndexMeta, write_meta
    from vask_server.adapters.vault import Vault

    vault = tmp_path / "mixed"
    vault.mkdir()
    for n in range(300):
        (vault / f"Note {n:03d}.md").write_text(_english(n), encoding="utf-8")
    for n in range(50):
        (vault / f"笔记 {n:02d}.md").write_text(_chinese(n), encoding="utf-8")
    settings = settings_for(vault)
    notes = Vault(vault).scan().notes
    _, keywords = _language_checks(settings, notes)
    reason = "50 of the 350 notes read are written mostly in Chinese or Japanese"
    first = f"the first sync will use cjk (Chinese and Japanese cut into pairs): {reason}"
    assert keywords.level == "ok" and keywords.detail == first
    # an index that chose before its reason was recorded (by the first 200 paths: English notes only)
    active = IndexRecord("fake-embed", 96, "s", SIMPLE, not_english=0.0)
    settings.resolved_index_dir().mkdir(parents=True)
    write_meta(settings.resolved_index_dir(), IndexMeta(active=active))
    _, keywords = _language_checks(settings, notes)
    assert keywords.level == "warn" and keywords.ok and "`vask index`" in keywords.fix
    assert keywords.detail.endswith(f"the notes now call for cjk: {reason}")


def test_brackets_around_nothing_name_no_note() -> None:
    """A question about the link syntax itself ("names not in [[ ]]") names no note to search in."""
    from vask_server.core.scope import find_mentions

    question = "ほかのノートで名前は書いてあるのに [[ ]] で囲まれていない箇所"
    assert find_mentions(question)[0] == [] and find_connection("what relates to [[ ]]?") is None


async def test_a_model_that_reads_chinese_is_not_held_to_the_keyword_rule(fake_ollama, tmp_path, settings_for):
    """The rule for a Chinese or Japanese question over an English-only model (ranked by keywords alone,
    declined when it names something no note holds) does not fire for a model that reads the language:
    its cosines are evidence, for Chinese questions and for passages in Chinese alike."""
    question = "扫描老照片以后用 Darktable 怎么整理？"  # (the album project's own words, a tool no note names)
    for model, declined in (("all-minilm", True), ("multilingual-e5-small", False)):
        fake_ollama.fake.embed_models[model] = 32
        (tmp_path / model).mkdir()
        vault = _cjk_vault(tmp_path / model)
        async with open_services(
            settings_for(vault, embed_model=model, index_dir=tmp_path / model / "idx")
        ) as services:
            await services.indexer.sync()
            asked = Question(question, today=TODAY, top_k=3, min_similarity=0.0)
            found = await services.searcher.search_question(asked)
            assert found.declined is declined, model
            if not declined:
                assert found.hits[0].path == "家庭相册数字化.md"


async def test_an_english_question_about_chinese_notes_is_held_to_the_line_of_questions_in_another_language(
    fake_ollama, tmp_path, settings_for, monkeypatch
):
    """A model that reads Chinese puts an English question and a Chinese passage further apart than two
    texts in one language, related or not: held to the line measured on Chinese passages, every English
    question about them was declined. The calibration of such an index also measures everyday English
    topics against its Chinese passages (core/across.py). In a vault mostly in English an English
    question is held to that line when its closest passage is Chinese; in one mostly in Chinese every
    English question is. A Chinese question keeps the vault's own line."""
    from vask_server.core.across import ACROSS_PROBES

    fake_ollama.fake.embed_models["multilingual-e5-small"] = 32
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copy(SAMPLE_VAULT / "01 Projects" / "家庭相册数字化.md", mixed / "家庭相册数字化.md")
    for name, text in (
        ("Sourdough", "Feed the starter the night before."),
        ("Running", "Easy runs on Monday, a long run on Sunday."),
        ("Garden", "Water the tomatoes in the evening."),
        ("Books", "Reading list for the winter."),
    ):
        (mixed / f"{name}.md").write_text(f"# {name}\n\n{text}\n", encoding="utf-8")
    english = "Which Lightroom folders hold the album scans?"  # closest: the Chinese note, not all of it
    near_english = "When do I feed the sourdough starter, and with which flour?"  # closest: an English note
    for vault, near_english_line in ((mixed, 2.15), (_cjk_vault(tmp_path), -0.85)):
        settings = settings_for(
            vault, embed_model="multilingual-e5-small", index_dir=vault.parent / f"idx-{vault.name}"
        )
        async with open_services(settings) as services:
            await services.indexer.sync()
            assert services.searcher.active().keyword_terms == CJK
            fake_ollama.fake.reset_counters()
            calibration = await services.searcher.calibrator.for_index(services.searcher.active())
            assert calibration.across_mean is not None and calibration.across_std is not None
            assert set(ACROSS_PROBES) <= {text.removeprefix("query: ") for text in fake_ollama.fake.embedded_texts}
            # the vault's own line far above anything, the other language's at the bottom: which one a
            # question is held to decides whether it is declined (ranked as measured: core/across.py)
            centre = await services.searcher.calibrator.across_centre(services.searcher.active())
            monkeypatch.setattr(services.searcher.calibrator, "across_centre", _returning(centre))
            measured = replace(calibration, pair_mean=2.0, pair_std=0.1, across_mean=-1.0, across_std=0.1)
            monkeypatch.setattr(services.searcher.calibrator, "for_index", _returning(measured))

            async def line(question: str) -> tuple[float | None, bool]:
                asked = Question(question, today=TODAY, top_k=3, min_similarity=0.0)
                found = await services.searcher.search_question(asked)
                return found.evidence_threshold, found.declined

            assert await line(english) == (pytest.approx(-0.85), False), vault.name
            assert (await line(near_english))[0] == pytest.approx(near_english_line), vault.name
            chinese = "扫描仪借的是谁的，分辨率设多少？"
            assert (await line(chinese))[0] == pytest.approx(2.15)  # a Chinese question: the vault's own line
            none_measured = _returning(replace(measured, across_mean=None))
            monkeypatch.setattr(services.searcher.calibrator, "for_index", none_measured)
            assert await line(english) == (pytest.approx(2.15), True)  # (the vault's own line, as before)


async def test_in_a_vault_in_both_languages_an_english_question_answered_among_chinese_notes_gets_their_line(
    fake_ollama, tmp_path, settings_for, monkeypatch
):
    """A vault with a quarter or more of its notes in Chinese (commands and code among them) is one of
    both languages: an English question whose first six passages include a Chinese one is held to the
    line of questions in another language, even when its closest passage is in English, however many
    hits it asks for. Its own line, measured on topics half of which are Chinese, declined most English
    questions there. Where its first six are all English it keeps the vault's line; in a vault mostly
    in English (a Chinese note in five) its closest passage alone decides, as before."""
    fake_ollama.fake.embed_models["multilingual-e5-small"] = 32
    near_english = "When do I feed the sourdough starter, and with which flour?"  # closest: an English note
    chinese = ("家庭相册数字化.md", "日记 - 杭州周末.md", "读书笔记 - 活着.md")
    english = {
        "Sourdough": "Feed the starter the night before.",
        "Running": "Easy runs on Monday, a long run on Sunday.",
        "Garden": "Water the tomatoes in the evening.",
    }
    more_sourdough = {f"Sourdough {n}": f"Feed the sourdough starter with rye flour, batch {n}." for n in range(7)}
    lines = {}
    for name, notes, english_notes in (("both", chinese[:2], english), ("english-led", chinese, more_sourdough)):
        vault = tmp_path / name
        vault.mkdir()
        for note in notes:
            folder = "01 Projects" if note.startswith("家庭") else "02 Areas/中文"
            shutil.copy(SAMPLE_VAULT / folder / note, vault / note)
        for title, text in english_notes.items():
            (vault / f"{title}.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
        settings = settings_for(vault, embed_model="multilingual-e5-small", index_dir=tmp_path / f"idx-{name}")
        async with open_services(settings) as services:
            await services.indexer.sync()
            index = services.searcher.active()
            assert index.keyword_terms == CJK and index.keyword_choice is not None
            choice = index.keyword_choice
            assert choice.cjk_notes * 4 >= choice.notes_read, name  # (a quarter or more)
            calibration = await services.searcher.calibrator.for_index(index)
            measured = replace(calibration, pair_mean=2.0, pair_std=0.1, across_mean=-1.0, across_std=0.1)
            monkeypatch.setattr(services.searcher.calibrator, "for_index", _returning(measured))
            for top_k in (1, 5):
                asked = Question(near_english, today=TODAY, top_k=top_k, min_similarity=0.0)
                found = await services.searcher.search_question(asked)
                lines[(name, top_k)] = found.evidence_threshold
                if name == "both":
                    assert not found.declined and found.hits[0].path == "Sourdough.md"
            chinese_question = Question("杭州周末去了哪里？", today=TODAY, top_k=5, min_similarity=0.0)
            found = await services.searcher.search_question(chinese_question)
            assert found.evidence_threshold == pytest.approx(2.15)  # a Chinese question: the vault's line
    assert lines[("both", 1)] == lines[("both", 5)] == pytest.approx(-0.85)
    assert lines[("english-led", 1)] == lines[("english-led", 5)] == pytest.approx(2.15)


async def test_another_model_with_the_same_instruction_gets_probes_of_its_own(fake_ollama, tmp_path, settings_for):
    """The everyday probes and the calibration's topics are kept embedded between searches: an index
    built anew with another model that takes the same instruction (here of another size) gets its own,
    instead of the old model's vectors (every search failed on their size)."""
    fake_ollama.fake.embed_models["multilingual-e5-small"] = 32
    fake_ollama.fake.embed_models["multilingual-e5-base"] = 48
    vault = _cjk_vault(tmp_path)
    english = Question("Which Lightroom folders hold the album scans?", today=TODAY, top_k=3, min_similarity=0.0)

    def settings(model: str):  # type: ignore[no-untyped-def]
        # (the decline line out of the way: what is asked here is that the search answers at all)
        return settings_for(vault, embed_model=model, index_dir=tmp_path / "idx", decline_sigmas=-3)

    async with open_services(settings("multilingual-e5-small")) as s:
        await s.indexer.sync()
    async with open_services(settings("multilingual-e5-base")) as s:
        assert s.searcher.active().model == "multilingual-e5-small"  # (the old index answers until the new is built)
        before = await s.searcher.search_question(english)
        assert before.hits
        await s.indexer.sync()
        assert s.searcher.active().model == "multilingual-e5-base"
        after = await s.searcher.search_question(english)
        assert after.hits and not after.declined


async def test_no_other_language_line_for_an_english_only_model_or_a_vault_without_chinese(
    fake_ollama, tmp_path, settings_for
):
    """Only an index of notes in Chinese or Japanese, of a model that reads them, measures it; one
    such calibration kept by a vask before (without it) is measured again."""
    fake_ollama.fake.embed_models["all-minilm"] = 32
    fake_ollama.fake.embed_models["multilingual-e5-small"] = 32
    for folder in ("a", "b", "en"):
        (tmp_path / folder).mkdir()
    cases = (("all-minilm", _cjk_vault(tmp_path / "a")), ("multilingual-e5-small", tmp_path / "en"))
    (tmp_path / "en" / "Sourdough.md").write_text("# Sourdough\n\nFeed the starter the night before.\n")
    (tmp_path / "en" / "Running.md").write_text("# Running\n\nEasy runs on Monday, a long run on Sunday.\n")
    for model, vault in cases:
        settings = settings_for(vault, embed_model=model, index_dir=tmp_path / f"idx-{model}")
        async with open_services(settings) as services:
            await services.indexer.sync()
            calibration = await services.searcher.calibrator.for_index(services.searcher.active())
            assert calibration.kind == "questions", model
            assert calibration.across_mean is None and calibration.across_std is None, model
    reads = settings_for(_cjk_vault(tmp_path / "b"), embed_model="multilingual-e5-small", index_dir=tmp_path / "idx-b")
    async with open_services(reads) as services:
        await services.indexer.sync()
        measured = await services.searcher.calibrator.for_index(services.searcher.active())
    kept = json.loads((tmp_path / "idx-b" / CALIBRATION_FILE).read_text("utf-8"))
    assert kept["across_mean"] == measured.across_mean is not None
    kept.pop("across_mean"), kept.pop("across_std")
    (tmp_path / "idx-b" / CALIBRATION_FILE).write_text(json.dumps(kept), "utf-8")
    fake_ollama.fake.reset_counters()
    async with open_services(reads) as services:
        again = await services.searcher.calibrator.for_index(services.searcher.active())
        assert again == measured and fake_ollama.fake.embed_calls >= 1  # (measured, not read)


def _returning(value):  # type: ignore[no-untyped-def]
    async def returns(index):  # type: ignore[no-untyped-def]
        return value

    return returns


async def test_an_english_question_about_chinese_notes_is_ranked_without_what_every_english_question_shares(
    fake_ollama, tmp_path, settings_for
):
    """What every English question shares pulls it towards the same Chinese passages whatever it asks:
    with the fake model, the instruction word every question is sent with ("query: "), which a note on
    URIs holds three times. Taken out (the everyday probes' mean, core/across.py), the note that
    answers the question ranks first; before, the URI note did for every English question."""
    fake_ollama.fake.embed_models["multilingual-e5-small"] = 384  # (its size: few of the fake's words collide)
    vault = _cjk_vault(tmp_path)
    (vault / "URI 参数.md").write_text("# URI 参数\n\n用 query 参数打开笔记：query 写在问号后面，query 要编码。\n")
    # (the decline line moved out of the way: what is asked here is the order)
    settings = settings_for(vault, embed_model="multilingual-e5-small", index_dir=tmp_path / "idx", decline_sigmas=-3)
    async with open_services(settings) as services:
        await services.indexer.sync()
        for question, path in (
            ("Which Lightroom folders hold the album scans?", "家庭相册数字化.md"),
            ("Was the Epson V600 scanner borrowed?", "家庭相册数字化.md"),
        ):
            asked = Question(question, today=TODAY, top_k=3, min_similarity=0.0)
            found = await services.searcher.search_question(asked)
            assert not found.declined and found.hits[0].path == path, (question, [h.path for h in found.hits])
        # A Chinese question is ranked as asked: the URI note answers its own question first
        found = await services.searcher.search_question(
            Question("query 参数写在哪里？", today=TODAY, top_k=3, min_similarity=0.0)
        )
        assert found.hits[0].path == "URI 参数.md"


async def test_the_warm_up_embeds_the_probes_an_english_question_is_ranked_with(fake_ollama, tmp_path, settings_for):
    """After a restart the calibration is read from disk, and the everyday probes that rank an English
    question over Chinese notes are not: the warm-up embeds them, so that the first such question sends
    the model only itself. A vault in English has no such probes to embed."""
    from vask_server.core.across import ACROSS_PROBES

    fake_ollama.fake.embed_models["multilingual-e5-small"] = 32
    vault = _cjk_vault(tmp_path)
    settings = settings_for(vault, embed_model="multilingual-e5-small", index_dir=tmp_path / "idx")
    async with open_services(settings) as services:
        await services.indexer.sync()
        await services.searcher.calibrator.for_index(services.searcher.active())  # (measured and kept)
    async with open_services(settings) as services:  # a restart: the calibration read from disk
        fake_ollama.fake.reset_counters()
        await services.searcher.warm()
        probes = {text.removeprefix("query: ") for text in fake_ollama.fake.embedded_texts}
        assert set(ACROSS_PROBES) <= probes
        fake_ollama.fake.reset_counters()
        asked = Question("Which Lightroom folders hold the album scans?", today=TODAY, top_k=3, min_similarity=0.0)
        await services.searcher.search_question(asked)
        assert not set(ACROSS_PROBES) & {t.removeprefix("query: ") for t in fake_ollama.fake.embedded_texts}


async def test_the_warm_up_loads_the_indexes_when_the_probes_cannot_be_embedded(
    fake_ollama, tmp_path, settings_for, monkeypatch
):
    """A model server down at the warm-up leaves the probes to the first English question, and the
    warm-up still opens the tables and loads their indexes (the keyword one is what searches use then)."""
    from vask_server.adapters.tables import IndexTables
    from vask_server.errors import OllamaUnavailable

    fake_ollama.fake.embed_models["multilingual-e5-small"] = 32
    settings = settings_for(_cjk_vault(tmp_path), embed_model="multilingual-e5-small", index_dir=tmp_path / "idx")
    async with open_services(settings) as services:
        await services.indexer.sync()
        await services.searcher.calibrator.for_index(services.searcher.active())

        async def down(index):  # type: ignore[no-untyped-def]
            raise OllamaUnavailable("Ollama is not reachable", "start it")

        checked: list[bool] = []
        real = IndexTables.check_keyword_search

        async def check(self):  # type: ignore[no-untyped-def]
            checked.append(True)
            await real(self)

        monkeypatch.setattr(services.searcher.calibrator, "across_centre", down)
        monkeypatch.setattr(IndexTables, "check_keyword_search", check)
        await services.searcher.warm()
        assert checked == [True]


async def test_english_questions_arriving_together_share_one_embedding_of_the_probes(
    fake_ollama, tmp_path, settings_for
):
    """After a restart (the calibration read from disk, no warm-up yet) several English questions at
    once wait for one embedding of the everyday probes instead of each sending them to the model."""
    import asyncio

    from vask_server.core.across import ACROSS_PROBES

    fake_ollama.fake.embed_models["multilingual-e5-small"] = 32
    settings = settings_for(_cjk_vault(tmp_path), embed_model="multilingual-e5-small", index_dir=tmp_path / "idx")
    async with open_services(settings) as services:
        await services.indexer.sync()
        await services.searcher.calibrator.for_index(services.searcher.active())  # (measured and kept)
    async with open_services(settings) as services:
        fake_ollama.fake.reset_counters()
        questions = ("Which Lightroom folders hold the album scans?", "Was the Epson scanner borrowed?", "Kyoto trip")
        await asyncio.gather(
            *(
                services.searcher.search_question(Question(q, today=TODAY, top_k=3, min_similarity=0.0))
                for q in questions
            )
        )
        sent = [text.removeprefix("query: ") for text in fake_ollama.fake.embedded_texts]
        assert sent.count(ACROSS_PROBES[0]) == 1


def test_the_centre_of_questions_in_another_language_is_taken_out_of_the_question() -> None:
    """A passage as close to every probe as to the question loses its lead to the passage closest to
    what the question itself asks; the scores stay cosines moved by the probes' lead, and searching
    with `query` orders passages as `scores` does."""
    from vask_server.core.across import AcrossCentre

    shared, own, other = np.eye(3, dtype=np.float32)
    question = (shared + own) / np.sqrt(2)
    hub, answer = shared, (own + other) / np.sqrt(2)
    centre = AcrossCentre(centre=0.8 * shared, level=0.1)
    passages = np.stack([hub, answer])
    assert (passages @ question)[0] > (passages @ question)[1]  # as asked, the hub first
    scores = centre.scores(question, passages)
    assert scores[1] > scores[0]
    assert scores == pytest.approx([question @ hub - 0.8 + 0.1, question @ answer + 0.1], abs=1e-6)
    searched = passages @ centre.query(question)
    assert np.argsort(-searched).tolist() == np.argsort(-scores).tolist()
