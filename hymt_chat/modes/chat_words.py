"""The chat page's own words (its pickers, commands, profiles, and the Chainlit UI strings it
words its own way), written by hand for the common languages; English is the source the model
translates for the others (:mod:`hymt_chat.room.chat_words`), as for the guest pages.

A key with a dot names Chainlit's own UI string (its ``translations/*.json`` path), which the
page's words replace; the others are the app's. Every table has every key
(tests/test_chat_words.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hymt_chat.lang.endonyms import names_in
from hymt_chat.lang.names import language_choices

__all__ = ["ENGLISH", "STARTERS", "STATIC", "PageText", "chainlit_keys"]

ENGLISH: dict[str, str] = {
    # Chainlit's strings, worded for a translator
    "chat.input.placeholder": "Type or paste text to translate, or attach a file…",
    "chat.input.actions.send": "Translate",
    "chat.input.actions.stop": "Stop translating",
    "chat.input.actions.attachFiles": "Attach a file",
    "chat.commands.button": "Commands",
    "chat.commands.changeTool": "Change command",
    "chat.commands.availableTools": "Commands",
    "chat.fileUpload.dragDrop": "Drop a file here",
    "chat.messages.status.using": "Running:",
    "chat.messages.status.used": "Done:",
    "chat.messages.actions.copy.button": "Copy",
    "chat.settings.title": "Languages",
    "chat.settings.customize": "Choose the languages to translate from and into",
    "chat.watermark": "Machine translation can be wrong. Check important text.",
    "navigation.header.readme": "About",
    # the app's
    "auto": "Auto-detect",
    "from": "Translate from",
    "into": "Translate into",
    "best": "Best quality",
    "best_tip": "Several candidate translations fused into one: slower; text messages only",
    "command_to": "Translate into another language: /to <language>",
    "command_swap": "Swap source and target languages",
    "command_detect": "Tell which language a text is in, without translating it",
    "command_reset": "Back to Auto-detect and the default target language",
    "translator": "Translator",
    "translator_about": "Translate text and files between 38 languages: pick the languages, "
                        "paste, done.",
    "agent": "Support agent",
    "agent_about": "Live support in two languages: paste the customer's messages and type your "
                   "replies; each is translated the right way, with a glossary, a check before "
                   "sending and a transcript to download.",
    "kiosk": "Kiosk",
    "kiosk_about": "A public screen: big language buttons, the translation read aloud, and a "
                   "fresh start after a short idle time. Nothing is kept.",
}

STATIC: dict[str, dict[str, str]] = {
    "en": ENGLISH,
    "zh": {
        "chat.input.placeholder": "输入或粘贴要翻译的文本，或附加文件…",
        "chat.input.actions.send": "翻译",
        "chat.input.actions.stop": "停止翻译",
        "chat.input.actions.attachFiles": "附加文件",
        "chat.commands.button": "命令",
        "chat.commands.changeTool": "更换命令",
        "chat.commands.availableTools": "命令",
        "chat.fileUpload.dragDrop": "将文件拖放到这里",
        "chat.messages.status.using": "进行中：",
        "chat.messages.status.used": "完成：",
        "chat.messages.actions.copy.button": "复制",
        "chat.settings.title": "语言",
        "chat.settings.customize": "选择源语言和目标语言",
        "chat.watermark": "机器翻译可能出错，重要内容请核对。",
        "navigation.header.readme": "关于",
        "auto": "自动检测",
        "from": "源语言",
        "into": "目标语言",
        "best": "最佳质量",
        "best_tip": "融合多个候选译文：较慢；仅限文本消息",
        "command_to": "翻译成另一种语言：/to <语言>",
        "command_swap": "交换源语言和目标语言",
        "command_detect": "只识别文本的语言，不翻译",
        "command_reset": "恢复自动检测和默认目标语言",
        "translator": "翻译",
        "translator_about": "在 38 种语言之间翻译文本和文件：选好语言，粘贴即可。",
        "agent": "客服",
        "agent_about": "双语实时客服：粘贴客户的消息，输入您的回复；每条都按正确方向翻译，"
                       "附带术语表、发送前检查和可下载的对话记录。",
        "kiosk": "自助终端",
        "kiosk_about": "公共屏幕：大号语言按钮，朗读译文，闲置片刻后自动清空。不保留任何内容。",
    },
    "fr": {
        "chat.input.placeholder": "Tapez ou collez le texte à traduire, ou joignez un fichier…",
        "chat.input.actions.send": "Traduire",
        "chat.input.actions.stop": "Arrêter la traduction",
        "chat.input.actions.attachFiles": "Joindre un fichier",
        "chat.commands.button": "Commandes",
        "chat.commands.changeTool": "Changer de commande",
        "chat.commands.availableTools": "Commandes",
        "chat.fileUpload.dragDrop": "Déposez un fichier ici",
        "chat.messages.status.using": "En cours :",
        "chat.messages.status.used": "Terminé :",
        "chat.messages.actions.copy.button": "Copier",
        "chat.settings.title": "Langues",
        "chat.settings.customize": "Choisissez les langues source et cible",
        "chat.watermark": "La traduction automatique peut se tromper. Vérifiez les textes "
                          "importants.",
        "navigation.header.readme": "À propos",
        "auto": "Détection automatique",
        "from": "Traduire depuis",
        "into": "Traduire vers",
        "best": "Meilleure qualité",
        "best_tip": "Plusieurs traductions candidates fusionnées en une seule : plus lent ; "
                    "messages texte uniquement",
        "command_to": "Traduire vers une autre langue : /to <langue>",
        "command_swap": "Inverser les langues source et cible",
        "command_detect": "Dire dans quelle langue est un texte, sans le traduire",
        "command_reset": "Revenir à la détection automatique et à la langue cible par défaut",
        "translator": "Traducteur",
        "translator_about": "Traduisez textes et fichiers entre 38 langues : choisissez les "
                            "langues, collez, c'est fait.",
        "agent": "Agent d'assistance",
        "agent_about": "Assistance en direct dans deux langues : collez les messages du client "
                       "et tapez vos réponses ; chacun est traduit dans le bon sens, avec un "
                       "glossaire, une vérification avant l'envoi et une transcription à "
                       "télécharger.",
        "kiosk": "Borne",
        "kiosk_about": "Un écran public : de grands boutons de langue, la traduction lue à "
                       "voix haute, et tout s'efface après un court temps d'inactivité. Rien "
                       "n'est conservé.",
    },
    "ja": {
        "chat.input.placeholder": "翻訳するテキストを入力または貼り付け、またはファイルを添付…",
        "chat.input.actions.send": "翻訳",
        "chat.input.actions.stop": "翻訳を中止",
        "chat.input.actions.attachFiles": "ファイルを添付",
        "chat.commands.button": "コマンド",
        "chat.commands.changeTool": "コマンドを変更",
        "chat.commands.availableTools": "コマンド",
        "chat.fileUpload.dragDrop": "ここにファイルをドロップ",
        "chat.messages.status.using": "実行中：",
        "chat.messages.status.used": "完了：",
        "chat.messages.actions.copy.button": "コピー",
        "chat.settings.title": "言語",
        "chat.settings.customize": "翻訳元と翻訳先の言語を選んでください",
        "chat.watermark": "機械翻訳は誤ることがあります。重要な文章は確認してください。",
        "navigation.header.readme": "このアプリについて",
        "auto": "自動検出",
        "from": "翻訳元",
        "into": "翻訳先",
        "best": "最高品質",
        "best_tip": "複数の候補訳を一つに統合します（時間がかかります。テキストのみ）",
        "command_to": "別の言語に翻訳：/to <言語>",
        "command_swap": "翻訳元と翻訳先の言語を入れ替える",
        "command_detect": "翻訳せずに、テキストの言語を判定する",
        "command_reset": "自動検出と既定の翻訳先に戻す",
        "translator": "翻訳",
        "translator_about": "38 言語の間でテキストとファイルを翻訳：言語を選んで、貼り付けるだけ。",
        "agent": "サポート担当",
        "agent_about": "二つの言語でのライブサポート：お客様のメッセージを貼り付け、返信を"
                       "入力します。それぞれ正しい向きに翻訳され、用語集、送信前の確認、"
                       "ダウンロードできる記録が付きます。",
        "kiosk": "キオスク",
        "kiosk_about": "公共の画面：大きな言語ボタン、訳文の読み上げ、しばらく使われないと"
                       "最初から。何も保存されません。",
    },
    "es": {
        "chat.input.placeholder": "Escriba o pegue el texto que quiere traducir, o adjunte un "
                                  "archivo…",
        "chat.input.actions.send": "Traducir",
        "chat.input.actions.stop": "Detener la traducción",
        "chat.input.actions.attachFiles": "Adjuntar un archivo",
        "chat.commands.button": "Comandos",
        "chat.commands.changeTool": "Cambiar de comando",
        "chat.commands.availableTools": "Comandos",
        "chat.fileUpload.dragDrop": "Suelte un archivo aquí",
        "chat.messages.status.using": "En curso:",
        "chat.messages.status.used": "Hecho:",
        "chat.messages.actions.copy.button": "Copiar",
        "chat.settings.title": "Idiomas",
        "chat.settings.customize": "Elija los idiomas de origen y de destino",
        "chat.watermark": "La traducción automática puede equivocarse. Revise los textos "
                          "importantes.",
        "navigation.header.readme": "Acerca de",
        "auto": "Detección automática",
        "from": "Traducir desde",
        "into": "Traducir a",
        "best": "Máxima calidad",
        "best_tip": "Varias traducciones candidatas fusionadas en una: más lento; solo "
                    "mensajes de texto",
        "command_to": "Traducir a otro idioma: /to <idioma>",
        "command_swap": "Intercambiar los idiomas de origen y de destino",
        "command_detect": "Decir en qué idioma está un texto, sin traducirlo",
        "command_reset": "Volver a la detección automática y al idioma de destino predeterminado",
        "translator": "Traductor",
        "translator_about": "Traduzca textos y archivos entre 38 idiomas: elija los idiomas, "
                            "pegue y listo.",
        "agent": "Agente de soporte",
        "agent_about": "Soporte en directo en dos idiomas: pegue los mensajes del cliente y "
                       "escriba sus respuestas; cada uno se traduce en el sentido correcto, con "
                       "un glosario, una revisión antes de enviar y una transcripción para "
                       "descargar.",
        "kiosk": "Quiosco",
        "kiosk_about": "Una pantalla pública: botones de idioma grandes, la traducción leída en "
                       "voz alta y un nuevo comienzo tras un breve tiempo sin uso. No se guarda "
                       "nada.",
    },
    "de": {
        "chat.input.placeholder": "Text zum Übersetzen eingeben oder einfügen, oder eine Datei "
                                  "anhängen…",
        "chat.input.actions.send": "Übersetzen",
        "chat.input.actions.stop": "Übersetzung abbrechen",
        "chat.input.actions.attachFiles": "Datei anhängen",
        "chat.commands.button": "Befehle",
        "chat.commands.changeTool": "Befehl wechseln",
        "chat.commands.availableTools": "Befehle",
        "chat.fileUpload.dragDrop": "Datei hier ablegen",
        "chat.messages.status.using": "Läuft:",
        "chat.messages.status.used": "Fertig:",
        "chat.messages.actions.copy.button": "Kopieren",
        "chat.settings.title": "Sprachen",
        "chat.settings.customize": "Wählen Sie Ausgangs- und Zielsprache",
        "chat.watermark": "Maschinelle Übersetzungen können Fehler enthalten. Prüfen Sie "
                          "wichtige Texte.",
        "navigation.header.readme": "Über",
        "auto": "Automatisch erkennen",
        "from": "Übersetzen aus",
        "into": "Übersetzen in",
        "best": "Beste Qualität",
        "best_tip": "Mehrere Übersetzungsvorschläge zu einem vereint: langsamer; nur "
                    "Textnachrichten",
        "command_to": "In eine andere Sprache übersetzen: /to <Sprache>",
        "command_swap": "Ausgangs- und Zielsprache tauschen",
        "command_detect": "Sagen, in welcher Sprache ein Text ist, ohne ihn zu übersetzen",
        "command_reset": "Zurück zur automatischen Erkennung und zur Standard-Zielsprache",
        "translator": "Übersetzer",
        "translator_about": "Texte und Dateien zwischen 38 Sprachen übersetzen: Sprachen wählen, "
                            "einfügen, fertig.",
        "agent": "Support-Mitarbeiter",
        "agent_about": "Live-Support in zwei Sprachen: Nachrichten des Kunden einfügen und "
                       "Antworten tippen; jede wird in die richtige Richtung übersetzt, mit "
                       "Glossar, Prüfung vor dem Senden und einem Protokoll zum Herunterladen.",
        "kiosk": "Kiosk",
        "kiosk_about": "Ein öffentlicher Bildschirm: große Sprachtasten, die Übersetzung wird "
                       "vorgelesen, und nach kurzer Pause beginnt alles neu. Nichts wird "
                       "gespeichert.",
    },
}

# (language, what the button says after the language's name, the message it sends): real
# phrases in several languages for a first try; the language is named in the reader's.
STARTERS: tuple[tuple[str, str, str], ...] = (
    ("zh", "会议改到下午三点", "你好！明天的会议改到下午三点，请准时参加。"),
    ("es", "¿Dónde está la estación?", "Disculpe, ¿dónde está la estación de tren más cercana?"),
    ("ja", "お問い合わせ", "お問い合わせありがとうございます。担当者より折り返しご連絡いたします。"),
    ("fr", "Votre colis", "Votre colis sera livré demain entre 9 h et 12 h."),
    ("de", "Passwort vergessen", "Ich habe mein Passwort vergessen. Können Sie mir bitte helfen?"),
)


def chainlit_keys(words: Mapping[str, str]) -> dict[str, str]:
    """The words that replace Chainlit's own UI strings (their keys are Chainlit's paths)."""
    return {key: said for key, said in words.items() if "." in key}


@dataclass(frozen=True, slots=True)
class PageText:
    """What a tab's page speaks: its *language* (a table code) and its words in it."""

    language: str = "en"
    words: Mapping[str, str] = field(default_factory=lambda: ENGLISH)

    def __getitem__(self, key: str) -> str:
        return self.words.get(key) or ENGLISH[key]

    def choices(self, *, include_auto: bool) -> dict[str, str]:
        """A language picker's items, each language named in the page's language."""
        return language_choices(include_auto=include_auto, reader=self.language,
                                auto_label=self["auto"])

    def starters(self) -> list[tuple[str, str]]:
        """(label, message) of the first-try buttons: "Spanish · ¿Dónde está la estación?"."""
        names = names_in(self.language)
        return [(f"{names[code]} · {teaser}", message) for code, teaser, message in STARTERS]
