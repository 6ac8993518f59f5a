/**
 * The pane's list of messages: the empty state, each question, an answer
 * card per answer (found again by its turn's id), and scrolling that follows
 * the newest text.
 */
import type { Component, HoverParent } from 'obsidian';
import type { AssistantTurn, UserTurn } from '../lib/chat';
import { basenameNoExt, stripMd } from '../lib/paths';
import { AnswerCard, type AnswerCardHost } from './AnswerCard';
import { FollowScroll } from './followScroll';
import { CHAT_SOURCE_PATH, createInternalLink, wireInternalLinks } from './links';

export type MessageListHost = Omit<AnswerCardHost, 'scroll' | 'owner'> & {
	/** Holds the list's events and the cards' renderings; shows the links' previews. */
	owner: Component & HoverParent;
};

export class MessageList {
	readonly el: HTMLElement;
	readonly scroll: FollowScroll;
	private emptyEl: HTMLElement;
	private readonly cards = new Map<number, AnswerCard>();
	private readonly cardHost: AnswerCardHost;

	constructor(parent: HTMLElement, host: MessageListHost) {
		this.el = parent.createDiv({ cls: 'vask-messages' });
		this.scroll = new FollowScroll(this.el);
		this.cardHost = { ...host, scroll: this.scroll };
		this.emptyEl = this.el.createDiv({ cls: 'vask-empty' });
		wireInternalLinks(host.owner, host.app, this.el, host.owner, () => CHAT_SOURCE_PATH);
	}

	/** What the pane says before the first question. */
	showEmpty(): void {
		this.emptyEl.empty();
		this.emptyEl.createDiv({ cls: 'vask-empty-title', text: 'Ask your vault' });
		this.emptyEl.createDiv({
			cls: 'vask-empty-text',
			text: 'Answers come only from your notes, and cite the notes they come from. Follow-up questions keep the conversation.',
		});
	}

	hideEmpty(): void {
		this.emptyEl.hide();
	}

	addQuestion(turn: UserTurn): void {
		const el = this.el.createDiv({ cls: ['vask-msg', 'vask-msg-user'] });
		el.createDiv({ cls: 'vask-msg-text', text: turn.content });
		if (turn.currentNote) {
			const ctx = el.createDiv({ cls: 'vask-msg-context', text: 'About ' });
			createInternalLink(ctx, stripMd(turn.currentNote), basenameNoExt(turn.currentNote));
		}
	}

	addAnswer(turn: AssistantTurn): AnswerCard {
		const card = new AnswerCard(this.el, turn, this.cardHost);
		this.cards.set(turn.id, card);
		return card;
	}

	/** The card showing the answer turn `id`, if it is in the list. */
	card(id: number): AnswerCard | undefined {
		return this.cards.get(id);
	}

	/** No messages any more; the empty state is left blank until showEmpty (a kept chat shown next needs none). */
	clear(): void {
		for (const card of this.cards.values()) card.dispose();
		this.cards.clear();
		this.el.empty();
		this.emptyEl = this.el.createDiv({ cls: 'vask-empty' });
	}
}
