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

from hymt_chat.lang.endonyms import endonym, names_in
from hymt_chat.lang.languages import LANGUAGES
from hymt_chat.lang.names import language_choices, language_name
from hymt_chat.modes.screen import Choice

__all__ = ["ENGLISH", "PAGE_LANGUAGE", "STARTERS", "STATIC", "PageText", "chainlit_keys"]

PAGE_LANGUAGE = "page_language"  # the settings' field, and the page script's message
_CAPITALISED = frozenset({"en", "de"})  # languages whose names are capitalised in a sentence

ENGLISH: dict[str, str] = {
    # each mode's own placeholder in the composer (the Translator's is Chainlit's string)
    "placeholder_agent": "The customer's message, or your reply",
    "placeholder_kiosk": "Type your text, in any language",
    # Chainlit's strings, worded for a translator
    # agents sign in with the name HYMT_AGENTS lists, not an e-mail address
    "auth.login.form.email.label": "Your name",
    "auth.login.form.email.required": "Type the name you sign in with",
    "auth.login.form.email.placeholder": "e.g. alice",
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
    "agent_language": "Your language (the agent's)",
    "back_translate": "Check before sending (back-translate my replies)",
    "use_context": "Send the last few turns as context",
    "tone": "Tone of my replies",
    "tone_neutral": "Neutral",
    "tone_formal": "Formal",
    "tone_friendly": "Friendly",
    "command_customer": "Set the customer's language: /customer <language>",
    "command_agent": "Set your own language: /agent <language>",
    "command_glossary": "Glossary: /glossary add <term> = <term> · list · remove <term> · clear",
    "command_transcript": "Download this conversation as CSV and Markdown",
    "command_room": "A room the customer joins from their own phone: /room · /room close",
    "command_tone": "Tone of your replies: /tone formal · friendly · neutral",
    "command_desk": "The support desk: /desk · /desk take <n> · /desk close · /desk block",
    "banner_warming": "Translation model warming up… you can type now: messages are translated "
                      "as soon as it is ready.",
    "banner_restarting": "Translation model restarting… you can type now: messages are "
                         "translated as soon as it is ready.",
    "banner_down": "The translation model is not reachable right now.",
    "banner_demo": "Demo model — a small stand-in, not Hunyuan-MT quality",
    "banner_limit": "This text is {{size}} characters; the limit is {{limit}}. Split it into "
                    "parts, or send it as a file. Nothing was sent; your text is still in the box.",
    "banner_hide": "Hide",
    "script_theme": "Toggle theme",
    "script_close": "Close",
    "page_language": "Page language",
    # the translation's own lines: progress, the answer's meta line, its buttons
    "translating": "Translating",
    "translating_best": "Translating · best quality",
    "translating_rest": "Translating the rest",
    "parts_done": "{{done}} of {{total}} parts",
    "time_left": "about {{left}} left",
    "parts_count": "{{count}} parts",
    "unknown_language": "Unknown language",
    "from_memory": "from memory",
    "demo_model": "demo model",
    "retry": "Retry",
    "retry_tip": "Send the same text again",
    "cancel": "Cancel",
    "cancel_tip": "Stop this translation (your other work goes on)",
    "stopped": "Stopped: this text was not translated. It is kept — press Retry to translate it.",
    "kept_hint": "Your text was kept — press Retry.",
    "swap_translate": "Swap languages and translate",
    "already_in": "This text is already in {{language}}, so the model was not asked.",
    "swap_hint": "Swap the languages to translate it the other way, or pick a target with "
                 "/to <language>.",
    "pick_hint": "Pick the language to translate into below, or with /to <language>.",
}

STATIC: dict[str, dict[str, str]] = {
    "en": ENGLISH,
    "zh": {
        "placeholder_agent": "客户的消息，或您的回复",
        "placeholder_kiosk": "输入您的文字，任何语言均可",
        "auth.login.form.email.label": "您的名字",
        "auth.login.form.email.required": "请输入登录用的名字",
        "auth.login.form.email.placeholder": "例如 alice",
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
        "agent_language": "您的语言（客服）",
        "back_translate": "发送前检查（回译我的回复）",
        "use_context": "附带最近几轮对话作为上下文",
        "tone": "回复的语气",
        "tone_neutral": "中性",
        "tone_formal": "正式",
        "tone_friendly": "亲切",
        "command_customer": "设置客户的语言：/customer <语言>",
        "command_agent": "设置您自己的语言：/agent <语言>",
        "command_glossary": "术语表：/glossary add <术语> = <术语> · list · remove <术语> · clear",
        "command_transcript": "下载此对话（CSV 和 Markdown）",
        "command_room": "客户用自己的手机加入的房间：/room · /room close",
        "command_tone": "回复的语气：/tone formal · friendly · neutral",
        "command_desk": "客服台：/desk · /desk take <编号> · /desk close · /desk block",
        "banner_warming": "翻译模型正在预热… 现在就可以输入：模型就绪后会立即翻译您的消息。",
        "banner_restarting": "翻译模型正在重启… 现在就可以输入：模型就绪后会立即翻译您的消息。",
        "banner_down": "翻译模型暂时无法连接。",
        "banner_demo": "演示模型——小型替代模型，达不到 Hunyuan-MT 的质量",
        "banner_limit": "此文本有 {{size}} 个字符，上限为 {{limit}}。请分段发送，或作为文件发送。"
                        "尚未发送任何内容，文本仍在输入框中。",
        "banner_hide": "隐藏",
        "script_theme": "切换主题",
        "script_close": "关闭",
        "page_language": "页面语言",
        "translating": "正在翻译",
        "translating_best": "正在翻译 · 最佳质量",
        "translating_rest": "正在翻译其余部分",
        "parts_done": "已完成 {{done}}/{{total}} 部分",
        "time_left": "约剩 {{left}}",
        "parts_count": "{{count}} 个部分",
        "unknown_language": "未知语言",
        "from_memory": "来自翻译记忆",
        "demo_model": "演示模型",
        "retry": "重试",
        "retry_tip": "再次发送同一文本",
        "cancel": "取消",
        "cancel_tip": "停止此翻译（其他任务继续进行）",
        "stopped": "已停止：此文本未翻译。文本已保留——按“重试”即可翻译。",
        "kept_hint": "您的文本已保留——请按“重试”。",
        "swap_translate": "交换语言并翻译",
        "already_in": "此文本已经是{{language}}，因此没有请求模型。",
        "swap_hint": "交换语言可反向翻译，或用 /to <语言> 选择目标语言。",
        "pick_hint": "请在下方选择目标语言，或使用 /to <语言>。",
    },
    "fr": {
        "placeholder_agent": "Le message du client, ou votre réponse",
        "placeholder_kiosk": "Tapez votre texte, dans n'importe quelle langue",
        "auth.login.form.email.label": "Votre nom",
        "auth.login.form.email.required": "Saisissez le nom avec lequel vous vous connectez",
        "auth.login.form.email.placeholder": "p. ex. alice",
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
        "agent_language": "Votre langue (celle de l'agent)",
        "back_translate": "Vérifier avant l'envoi (retraduire mes réponses)",
        "use_context": "Envoyer les derniers échanges comme contexte",
        "tone": "Ton de mes réponses",
        "tone_neutral": "Neutre",
        "tone_formal": "Soutenu",
        "tone_friendly": "Amical",
        "command_customer": "Définir la langue du client : /customer <langue>",
        "command_agent": "Définir votre propre langue : /agent <langue>",
        "command_glossary": "Glossaire : /glossary add <terme> = <terme> · list · remove <terme> "
                            "· clear",
        "command_transcript": "Télécharger cette conversation en CSV et en Markdown",
        "command_room": "Un salon que le client rejoint depuis son téléphone : /room · "
                        "/room close",
        "command_tone": "Ton de vos réponses : /tone formal · friendly · neutral",
        "command_desk": "Le guichet d'assistance : /desk · /desk take <n> · /desk close · "
                        "/desk block",
        "banner_warming": "Le modèle de traduction démarre… vous pouvez déjà écrire : les messages "
                          "seront traduits dès qu'il sera prêt.",
        "banner_restarting": "Le modèle de traduction redémarre… vous pouvez déjà écrire : les "
                             "messages seront traduits dès qu'il sera prêt.",
        "banner_down": "Le modèle de traduction est injoignable pour le moment.",
        "banner_demo": "Modèle de démonstration — un petit remplaçant, pas la qualité de "
                       "Hunyuan-MT",
        "banner_limit": "Ce texte compte {{size}} caractères ; la limite est de {{limit}}. "
                        "Découpez-le en parties, ou envoyez-le comme fichier. Rien n'a été "
                        "envoyé ; votre texte est toujours dans la zone de saisie.",
        "banner_hide": "Masquer",
        "script_theme": "Changer de thème",
        "script_close": "Fermer",
        "page_language": "Langue de la page",
        "translating": "Traduction en cours",
        "translating_best": "Traduction en cours · meilleure qualité",
        "translating_rest": "Traduction du reste",
        "parts_done": "parties traduites : {{done}} sur {{total}}",
        "time_left": "encore environ {{left}}",
        "parts_count": "{{count}} parties",
        "unknown_language": "Langue inconnue",
        "from_memory": "depuis la mémoire",
        "demo_model": "modèle de démonstration",
        "retry": "Réessayer",
        "retry_tip": "Renvoyer le même texte",
        "cancel": "Annuler",
        "cancel_tip": "Arrêter cette traduction (vos autres travaux continuent)",
        "stopped": "Arrêté : ce texte n'a pas été traduit. Il est conservé — appuyez sur "
                   "Réessayer pour le traduire.",
        "kept_hint": "Votre texte a été conservé — appuyez sur Réessayer.",
        "swap_translate": "Inverser les langues et traduire",
        "already_in": "Ce texte est déjà en {{language}} : le modèle n'a pas été sollicité.",
        "swap_hint": "Inversez les langues pour le traduire dans l'autre sens, ou "
                     "choisissez une langue cible avec /to <langue>.",
        "pick_hint": "Choisissez ci-dessous la langue cible, ou avec /to <langue>.",
    },
    "ja": {
        "placeholder_agent": "お客様のメッセージ、またはあなたの返信",
        "placeholder_kiosk": "テキストを入力してください。どの言語でも構いません",
        "auth.login.form.email.label": "お名前",
        "auth.login.form.email.required": "サインインに使う名前を入力してください",
        "auth.login.form.email.placeholder": "例: alice",
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
        "agent_language": "あなたの言語（担当者）",
        "back_translate": "送信前に確認（返信を逆翻訳）",
        "use_context": "直近のやりとりを文脈として送る",
        "tone": "返信の口調",
        "tone_neutral": "標準",
        "tone_formal": "丁寧",
        "tone_friendly": "親しみやすい",
        "command_customer": "お客様の言語を設定：/customer <言語>",
        "command_agent": "自分の言語を設定：/agent <言語>",
        "command_glossary": "用語集：/glossary add <用語> = <用語> · list · remove <用語> · clear",
        "command_transcript": "この会話を CSV と Markdown でダウンロード",
        "command_room": "お客様が自分のスマホから参加するルーム：/room · /room close",
        "command_tone": "返信の口調：/tone formal · friendly · neutral",
        "command_desk": "サポート窓口：/desk · /desk take <番号> · /desk close · /desk block",
        "banner_warming": "翻訳モデルを準備中です… 今すぐ入力できます。準備ができしだい翻訳します。",
        "banner_restarting": "翻訳モデルを再起動中です… 今すぐ入力できます。準備ができしだい翻訳します。",
        "banner_down": "現在、翻訳モデルに接続できません。",
        "banner_demo": "デモ用モデル — 小さな代替モデルで、本来の翻訳品質ではありません",
        "banner_limit": "このテキストは {{size}} 文字です。上限は {{limit}} 文字です。分割するか、"
                        "ファイルとして送ってください。何も送信されていません。テキストは入力欄に"
                        "残っています。",
        "banner_hide": "閉じる",
        "script_theme": "テーマを切り替え",
        "script_close": "閉じる",
        "page_language": "ページの言語",
        "translating": "翻訳中",
        "translating_best": "翻訳中 · 最高品質",
        "translating_rest": "残りを翻訳中",
        "parts_done": "{{total}} 件中 {{done}} 件",
        "time_left": "残り約 {{left}}",
        "parts_count": "{{count}} 件に分割",
        "unknown_language": "不明な言語",
        "from_memory": "翻訳メモリから",
        "demo_model": "デモモデル",
        "retry": "再試行",
        "retry_tip": "同じテキストをもう一度送信します",
        "cancel": "キャンセル",
        "cancel_tip": "この翻訳を停止します（他の作業は続きます）",
        "stopped": "停止しました：このテキストは翻訳されていません。テキストは保持されています。「再試行」を押すと翻訳します。",
        "kept_hint": "テキストは保持されています。「再試行」を押してください。",
        "swap_translate": "言語を入れ替えて翻訳",
        "already_in": "このテキストはすでに{{language}}のため、モデルには送信していません。",
        "swap_hint": "言語を入れ替えて逆方向に翻訳するか、/to <言語> で翻訳先を選んでください。",
        "pick_hint": "下で翻訳先の言語を選ぶか、/to <言語> を使ってください。",
    },
    "es": {
        "placeholder_agent": "El mensaje del cliente, o su respuesta",
        "placeholder_kiosk": "Escriba su texto, en cualquier idioma",
        "auth.login.form.email.label": "Su nombre",
        "auth.login.form.email.required": "Escriba el nombre con el que inicia sesión",
        "auth.login.form.email.placeholder": "p. ej. alice",
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
        "agent_language": "Su idioma (el del agente)",
        "back_translate": "Revisar antes de enviar (retraducir mis respuestas)",
        "use_context": "Enviar los últimos turnos como contexto",
        "tone": "Tono de mis respuestas",
        "tone_neutral": "Neutro",
        "tone_formal": "Formal",
        "tone_friendly": "Cercano",
        "command_customer": "Fijar el idioma del cliente: /customer <idioma>",
        "command_agent": "Fijar su propio idioma: /agent <idioma>",
        "command_glossary": "Glosario: /glossary add <término> = <término> · list · remove "
                            "<término> · clear",
        "command_transcript": "Descargar esta conversación en CSV y Markdown",
        "command_room": "Una sala a la que el cliente entra desde su propio teléfono: /room · "
                        "/room close",
        "command_tone": "Tono de sus respuestas: /tone formal · friendly · neutral",
        "command_desk": "El mostrador de soporte: /desk · /desk take <n> · /desk close · "
                        "/desk block",
        "banner_warming": "El modelo de traducción se está iniciando… ya puede escribir: los "
                          "mensajes se traducirán en cuanto esté listo.",
        "banner_restarting": "El modelo de traducción se está reiniciando… ya puede escribir: los "
                             "mensajes se traducirán en cuanto esté listo.",
        "banner_down": "El modelo de traducción no está disponible en este momento.",
        "banner_demo": "Modelo de demostración: un pequeño sustituto, sin la calidad de "
                       "Hunyuan-MT",
        "banner_limit": "Este texto tiene {{size}} caracteres; el límite es {{limit}}. Divídalo "
                        "en partes o envíelo como archivo. No se envió nada; su texto sigue en "
                        "el cuadro.",
        "banner_hide": "Ocultar",
        "script_theme": "Cambiar el tema",
        "script_close": "Cerrar",
        "page_language": "Idioma de la página",
        "translating": "Traduciendo",
        "translating_best": "Traduciendo · máxima calidad",
        "translating_rest": "Traduciendo el resto",
        "parts_done": "{{done}} de {{total}} partes",
        "time_left": "quedan unos {{left}}",
        "parts_count": "{{count}} partes",
        "unknown_language": "Idioma desconocido",
        "from_memory": "de la memoria",
        "demo_model": "modelo de demostración",
        "retry": "Reintentar",
        "retry_tip": "Enviar de nuevo el mismo texto",
        "cancel": "Cancelar",
        "cancel_tip": "Detener esta traducción (el resto de su trabajo continúa)",
        "stopped": "Detenido: este texto no se tradujo. Se ha conservado; pulse Reintentar "
                   "para traducirlo.",
        "kept_hint": "Su texto se ha conservado; pulse Reintentar.",
        "swap_translate": "Intercambiar idiomas y traducir",
        "already_in": "Este texto ya está en {{language}}, así que no se consultó al modelo.",
        "swap_hint": "Intercambie los idiomas para traducirlo en sentido contrario, o "
                     "elija el idioma de destino con /to <idioma>.",
        "pick_hint": "Elija abajo el idioma de destino, o con /to <idioma>.",
    },
    "de": {
        "placeholder_agent": "Die Nachricht des Kunden oder Ihre Antwort",
        "placeholder_kiosk": "Geben Sie Ihren Text ein, in jeder Sprache",
        "auth.login.form.email.label": "Ihr Name",
        "auth.login.form.email.required": "Geben Sie den Namen ein, mit dem Sie sich anmelden",
        "auth.login.form.email.placeholder": "z. B. alice",
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
        "agent_language": "Ihre Sprache (die des Mitarbeiters)",
        "back_translate": "Vor dem Senden prüfen (meine Antworten rückübersetzen)",
        "use_context": "Die letzten Wortwechsel als Kontext mitsenden",
        "tone": "Ton meiner Antworten",
        "tone_neutral": "Neutral",
        "tone_formal": "Förmlich",
        "tone_friendly": "Freundlich",
        "command_customer": "Sprache des Kunden festlegen: /customer <Sprache>",
        "command_agent": "Eigene Sprache festlegen: /agent <Sprache>",
        "command_glossary": "Glossar: /glossary add <Begriff> = <Begriff> · list · remove "
                            "<Begriff> · clear",
        "command_transcript": "Dieses Gespräch als CSV und Markdown herunterladen",
        "command_room": "Ein Raum, den der Kunde vom eigenen Handy aus betritt: /room · "
                        "/room close",
        "command_tone": "Ton Ihrer Antworten: /tone formal · friendly · neutral",
        "command_desk": "Der Support-Schalter: /desk · /desk take <Nr.> · /desk close · "
                        "/desk block",
        "banner_warming": "Das Übersetzungsmodell startet… Sie können schon schreiben: "
                          "Nachrichten werden übersetzt, sobald es bereit ist.",
        "banner_restarting": "Das Übersetzungsmodell startet neu… Sie können schon schreiben: "
                             "Nachrichten werden übersetzt, sobald es bereit ist.",
        "banner_down": "Das Übersetzungsmodell ist gerade nicht erreichbar.",
        "banner_demo": "Demo-Modell – ein kleiner Ersatz, nicht in der Qualität von Hunyuan-MT",
        "banner_limit": "Dieser Text hat {{size}} Zeichen; die Grenze liegt bei {{limit}}. "
                        "Teilen Sie ihn auf oder senden Sie ihn als Datei. Nichts wurde "
                        "gesendet; Ihr Text steht noch im Eingabefeld.",
        "banner_hide": "Ausblenden",
        "script_theme": "Design wechseln",
        "script_close": "Schließen",
        "page_language": "Seitensprache",
        "translating": "Wird übersetzt",
        "translating_best": "Wird übersetzt · beste Qualität",
        "translating_rest": "Rest wird übersetzt",
        "parts_done": "{{done}} von {{total}} Teilen",
        "time_left": "noch etwa {{left}}",
        "parts_count": "{{count}} Teile",
        "unknown_language": "Unbekannte Sprache",
        "from_memory": "aus dem Übersetzungsspeicher",
        "demo_model": "Demo-Modell",
        "retry": "Erneut versuchen",
        "retry_tip": "Denselben Text noch einmal senden",
        "cancel": "Abbrechen",
        "cancel_tip": "Diese Übersetzung stoppen (Ihre übrige Arbeit läuft weiter)",
        "stopped": "Gestoppt: Dieser Text wurde nicht übersetzt. Er bleibt erhalten – "
                   "drücken Sie „Erneut versuchen“, um ihn zu übersetzen.",
        "kept_hint": "Ihr Text bleibt erhalten – drücken Sie „Erneut versuchen“.",
        "swap_translate": "Sprachen tauschen und übersetzen",
        "already_in": "Dieser Text ist bereits auf {{language}}, daher wurde das Modell "
                      "nicht gefragt.",
        "swap_hint": "Tauschen Sie die Sprachen, um in die andere Richtung zu übersetzen, "
                     "oder wählen Sie die Zielsprache mit /to <Sprache>.",
        "pick_hint": "Wählen Sie unten die Zielsprache oder nutzen Sie /to <Sprache>.",
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

    def fill(self, key: str, **slots: object) -> str:
        """The words of *key* with its ``{{slots}}`` filled in (the tables keep them as
        i18next writes them, so that one check covers the page's strings and these)."""
        said = self[key]
        for name, value in slots.items():
            said = said.replace("{{" + name + "}}", str(value))
        return said

    def name_of(self, code: str | None, *, in_text: bool = False) -> str:
        """A language's name in the page's language ("Anglais" on a French page; "anglais"
        *in_text*, inside a sentence, where only English and German write it capitalised)."""
        if code is None:
            return self["unknown_language"]
        if self.language == "en":
            return language_name(code)
        name = names_in(self.language).get(code) or language_name(code)
        if in_text and self.language not in _CAPITALISED:
            name = name[:1].lower() + name[1:]
        return name

    def choices(self, *, include_auto: bool) -> dict[str, str]:
        """A language picker's items, each language named in the page's language."""
        return language_choices(include_auto=include_auto, reader=self.language,
                                auto_label=self["auto"])

    def page_choice(self) -> Choice:
        """The page's own language picker: each language named in itself, so that a reader
        finds theirs whatever the page speaks now."""
        return Choice(PAGE_LANGUAGE, self["page_language"],
                      {endonym(lang.code): lang.code for lang in LANGUAGES}, self.language)

    def starters(self) -> list[tuple[str, str]]:
        """(label, message) of the first-try buttons: "Spanish · ¿Dónde está la estación?"."""
        names = names_in(self.language)
        return [(f"{names[code]} · {teaser}", message) for code, teaser, message in STARTERS]
