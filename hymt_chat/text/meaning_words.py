"""The words the meaning checks read: negation, idioms that only look negative, opposites.

Hand-written (no well-kept package ships negation cues or antonyms for these languages
offline): each table is small, lower-case, and read by :mod:`hymt_chat.text.meaning` only. A
language missing from a table is simply not checked that way.

* :data:`NEGATORS`: the words (or, for languages written without spaces and for verb
  suffixes, the substrings in :data:`NEGATION_PARTS`) that turn a statement into its
  opposite, for all 38 languages;
* :data:`NEUTRAL`: phrases with such a word that do not negate anything ("no problem",
  "don't worry", "不客气", "すみません"), taken out before counting;
* :data:`OPPOSITES`: words or phrases a translation must not swap ("in stock" / "out of
  stock", "cancel" / "confirm", "broken" / "late"); a word of four letters or more matches
  any word it begins ("cancel" matches "cancelled"), a shorter one itself, a phrase as
  written.
"""

from __future__ import annotations

__all__ = [
           "NAMED",
           "NEGATION_PARTS",
           "NEGATIVE_WORDS",
           "NEGATORS",
           "NEUTRAL",
           "NUMBER_WORDS",
           "OPPOSITES",
           "UNSPACED",
]

UNSPACED = frozenset({"zh", "zh-Hant", "yue", "ja", "th", "km", "my", "bo"})
"""Written without spaces between words: cues are found as substrings."""

NEGATORS: dict[str, frozenset[str]] = {k: frozenset(v.split()) for k, v in {
    "en": "not no never nothing nobody none neither nor nowhere without cannot can't don't "
          "doesn't didn't won't isn't aren't wasn't weren't haven't hasn't hadn't shouldn't "
          "couldn't wouldn't mustn't needn't unable unless",
    "es": "no nunca jamás nada nadie ninguno ninguna ningún ni tampoco sin salvo",
    "pt": "não nunca jamais nada ninguém nenhum nenhuma nem sem",
    "it": "non mai niente nulla nessuno nessuna nessun né senza",
    "fr": "ne n' pas jamais rien aucun aucune sans ni",
    "de": "nicht kein keine keinen keinem keiner keines nie niemals nichts niemand ohne weder "
          "nirgends",
    "nl": "niet geen nooit niets niemand zonder noch nergens",
    "pl": "nie nigdy nic nikt żaden żadna żadne bez ani",
    "cs": "ne nic nikdy nikdo žádný žádná žádné bez ani",
    "ru": "не нет никогда ничего ничто никто ни без нельзя",
    "uk": "не ні немає ніколи нічого ніхто без",
    "kk": "жоқ емес ешқашан ешкім ештеңе",
    "mn": "үгүй биш хэзээ ч хэн ч юу ч",
    "tr": "değil yok hiç asla hiçbir",
    "ar": "لا لم لن ليس ليست غير بدون دون أبدا ابدا",
    "fa": "نه نیست هیچ هرگز بدون",
    "ur": "نہیں نہ مت کبھی بغیر",
    "ug": "ئەمەس يوق ھەرگىز",
    "he": "לא אין אל אף בלי מעולם לעולם",
    "hi": "नहीं न मत कभी बिना",
    "mr": "नाही नको न विना",
    "bn": "না নি নয় নেই ছাড়া",
    "gu": "નથી ન નહીં ના વગર",
    "te": "లేదు కాదు వద్దు లేకుండా",
    "ta": "இல்லை அல்ல வேண்டாம் இன்றி",
    "vi": "không chưa chẳng đừng chớ",
    "id": "tidak tak bukan belum jangan tanpa tiada",
    "ms": "tidak tak bukan belum jangan tanpa tiada",
    "tl": "hindi wala walang huwag",
    "ko": "안 못 않 없 말 아니",
}.items()}

# Words that carry a negation in their meaning ("expired" is "no longer valid", "forget" is
# "not remember", "unusual" is "not usual"): a negation plus one of them is a positive, so
# "It's not unusual" and "It's common" agree. Stems: a word that begins with one counts.
NEGATIVE_WORDS: dict[str, tuple[str, ...]] = {k: tuple(v.split()) for k, v in {
    "en": "expired excluded absent missing lack forget forgot fail refus unusual uncommon "
          "unlikely unavailable unpaid unknown unclear unsure impossible invalid incorrect "
          "incomplete inactive illegal dissatisf disagree nonrefundable non-refundable",
    "es": "falta faltan faltaba olvid caducad vencid excluid ausente imposible inválid "
          "incorrect incomplet desconocid",
    "fr": "manque manquait oubli expiré exclu absent impossible invalide incorrect incomplet "
          "inconnu",
    "de": "fehlt fehlen fehlte vergess entfallen abgelaufen ausgeschlossen abwesend unmöglich ungültig "
          "unvollständig unbekannt",
    "pt": "falta faltam esquec expirad excluíd ausente impossível inválid incorret",
    "it": "manca mancano dimentic scadut esclus assente impossibile non valid",
    "zh": "缺 忘 过期 過期 除非 漏 少了",
    "ja": "忘れ 期限切れ 欠け",
}.items()}

# Numbers written as words, 2 and up ("one" is also an article: "one of our agents").
NUMBER_WORDS: dict[str, dict[str, int]] = {k: dict(zip(v.split(), range(2, 2 + len(v.split())),
                                                     strict=True)) for k, v in {
    "en": "two three four five six seven eight nine ten eleven twelve thirteen fourteen "
          "fifteen sixteen seventeen eighteen nineteen twenty",
    "es": "dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce quince",
    "fr": "deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze",
    "de": "zwei drei vier fünf sechs sieben acht neun zehn elf zwölf",
    "pt": "dois três quatro cinco seis sete oito nove dez",
    "it": "due tre quattro cinque sei sette otto nove dieci",
    "nl": "twee drie vier vijf zes zeven acht negen tien",
    "zh": "二 三 四 五 六 七 八 九",  # 两 (2) is added below: a second word for two
    "ja": "二 三 四 五 六 七 八 九",
}.items()}

# Words of four letters or more that carry no content of their own: a clause made of them is
# not "left out" when a back-translation words it otherwise.
FUNCTION_WORDS: dict[str, frozenset[str]] = {k: frozenset(v.split()) for k, v in {
    "en": "unfortunately however actually currently please about with that this your have will been from they them their there were what "
          "when which would could should shall also just very only into onto than then these "
          "those here does done being some such much many more most other over after again "
          "still already really it's i'm you're we're we'll you'll i'll i've we've that's "
          "there's they're it'll he'll she'll",
    "es": "favor lamentablemente desgraciadamente este esta estos estas está estaba estaban ese esa eso pero para como porque "
          "cuando donde también muy sobre entre hasta desde hacia usted ustedes nuestro "
          "nuestra mucho todo todos toda ahora aquí sido haber había fue fueron será",
    "fr": "plaît plait malheureusement cette ceci cela mais pour avec dans sans sous plus très tout tous toute vous nous "
          "votre notre leur leurs était étais étaient sont avez avons peut être quand comme "
          "aussi déjà ici c'est c'était n'est qu'il qu'on",
    "de": "bitte leider eine einen einem einer eines diese dieser dieses ihre ihren ihrem ihnen mein "
          "meine meinen meinem unser unsere aber oder weil wenn dann auch noch schon sehr "
          "wird werden wurde wurden sind habe haben hatte hier dort mich dich sich nach über",
    "pt": "este esta isso para como porque quando onde também muito sobre entre até desde "
          "você vocês nosso nossa todo toda agora aqui está estava foi será",
    "it": "questo questa quello quella però come perché quando dove anche molto sopra "
          "tra fino dalla della nella sono stato stata abbiamo avete tutto tutti ancora",
}.items()}
_CJK_FUNCTION = "的了是在我你他她它们吗呢吧啊也都就这那个有和与"
FUNCTION_WORDS["zh"] = frozenset(_CJK_FUNCTION)

# Organisations a Chinese text names without a Latin letter (couriers, payment, shops).
NAMED: dict[str, tuple[str, ...]] = {
    "zh": ("支付宝", "微信支付", "微信", "淘宝", "天猫", "京东", "拼多多", "顺丰", "中通", "圆通",
           "申通", "韵达", "邮政", "银联", "美团", "饿了么", "苏宁", "抖音"),
}

NEGATION_PARTS: dict[str, tuple[str, ...]] = {
    # Chinese and Cantonese: the characters that negate (compounds that do not are NEUTRAL).
    "zh": ("不", "没", "沒", "别", "別", "无", "無", "未", "非", "勿", "莫", "甭"),
    "zh-Hant": ("不", "沒", "別", "無", "未", "非", "勿", "莫"),
    "yue": ("唔", "冇", "未", "咪", "不", "無"),
    "ja": ("ない", "ません", "ず", "なかった", "無", "不", "未", "非", "だめ", "ダメ"),
    "ko": ("않", "없", "못", "안 ", "아니"),
    "th": ("ไม่", "ห้าม", "อย่า", "ปราศจาก"),
    "km": ("មិន", "កុំ", "គ្មាន", "ឥត"),
    "my": ("ဘူး", "မရ", "မဟုတ်"),
    "bo": ("མི་", "མ་", "མེད", "མིན"),
    # Verb suffixes (Turkish -me/-ma, Persian and Urdu verb prefixes): a word part, not a word.
    "tr": ("mıyor", "miyor", "muyor", "müyor", "madı", "medi", "maz ", "mez ", "mayacak",
           "meyecek", "mamı", "memi", "mayın", "meyin"),
    "fa": ("نمی", "نخواه", "نکرد", "نکن", "ندار", "نیست"),
}

NEUTRAL: dict[str, tuple[str, ...]] = {
    "en": ("no problem", "not a problem", "no worries", "don't worry", "do not worry",
           "don't hesitate", "do not hesitate", "not at all", "no doubt", "no later than",
           "not only", "can't wait", "cannot wait", "never mind", "no matter", "why not",
           "if not", "or not", "whether or not", "not yet sure", "don't mention it",
           "costs nothing", "doesn't matter", "does not matter", "don't mind", "do not mind",
           "not the first time", "no harm", "nothing to worry about", "can't complain",
           "at no cost", "at no extra cost", "would it be possible", "is it possible",
           "could you please", "i was wondering if"),
    "es": ("no hay problema", "sin problema", "no se preocupe", "no te preocupes",
           "no dude", "no dudes", "de nada", "no solo", "no sólo", "ni idea", "no pasa nada",
           "no me importa", "no es la primera vez", "no cuesta nada", "no hay de qué",
           "no importa", "sería posible", "es posible que", "sin coste", "sin costo", "sin cargo", "sin costes"),
    "pt": ("sem problema", "não há problema", "não se preocupe", "não hesite", "de nada",
           "não só"),
    "it": ("nessun problema", "non c'è problema", "non si preoccupi", "non esiti", "di niente",
           "non solo"),
    "fr": ("pas de problème", "pas de souci", "pas de soucis", "aucun problème", "ne vous "
           "inquiétez pas", "ne t'inquiète pas", "n'hésitez pas", "n'hésite pas", "de rien",
           "il n'y a pas de quoi", "non seulement", "je vous en prie", "ce n'est pas grave",
           "pas grave", "ça ne me dérange pas", "n'est pas la première fois", "ne coûte rien",
           "ne vous en faites pas", "sans frais", "serait-il possible", "est-il possible",
           "est-ce possible"),
    "de": ("kein problem", "keine sorge", "keine ursache", "nichts zu danken", "zögern sie "
           "nicht", "nicht nur", "nicht wahr", "machen sie sich keine sorgen", "macht nichts",
           "nicht schlimm", "macht mir nichts aus", "nicht das erste mal", "kostet nichts",
           "nichts zu danken", "gern geschehen", "wäre es möglich", "ist es möglich", "ohne aufpreis", "ohne zusätzliche kosten"),
    "nl": ("geen probleem", "geen zorgen", "niet alleen"),
    "ru": ("нет проблем", "не за что", "не волнуйтесь", "не беспокойтесь", "не только"),
    "zh": ("对不起", "對不起", "不好意思", "不客气", "不客氣", "不用谢", "不用客气", "没关系",
           "沒關係", "没问题", "沒問題", "不错", "不錯", "不过", "不過", "差不多", "不久",
           "不断", "不仅", "不但", "不少", "无论", "無論", "不管", "别担心", "不用担心",
           "未来", "非常", "并非不", "不妨", "毫无疑问", "无需担心", "没事", "沒事", "别客气",
           "別客氣", "不是第一次", "没什么", "不用了", "不要紧", "不要緊"),
    "zh-Hant": ("對不起", "不好意思", "不客氣", "沒關係", "沒問題", "不錯", "不過", "差不多",
                "非常", "未來", "無論", "不管"),
    "ja": ("すみません", "申し訳ありません", "申し訳ございません", "かまいません", "構いません",
           "問題ありません", "問題ございません", "かもしれません", "しれません", "ご遠慮なく",
           "少なく", "未来"),
    "ko": ("괜찮", "문제없", "아니요"),
}

# Groups of words that exclude each other: "a|b" is a word and its opposite; "a,b|c,d|e" are
# states of one thing (a parcel "broken, damaged" / "late, delayed" / "lost"): words of one
# slot are synonyms, a word of another slot says something else.
OPPOSITES: dict[str, tuple[tuple[tuple[str, ...], ...], ...]] = {k: tuple(
    tuple(tuple(slot.split(",")) for slot in group.split("|"))
    for group in v.split(";") if group.strip()) for k, v in {
    "en": "in stock,back in stock,available|sold out,out of stock;"
          "decreas,go down,goes down,went down,drop,fall,lower,reduc|increas,go up,goes up,"
          "went up,rise,rising,raise,higher;reactivat|suspend,deactivat,block;broken,damaged,cracked,smashed,faulty|late,delayed|lost,missing|stolen;added|removed;in stock|out of stock;available|unavailable;available|sold out;cancel|confirm;"
          "cancel|book;active|suspend;active|inactive;activ|deactivat;enable|disable;"
          "open|close;open|shut;accept|reject;accept|declin;approv|reject;approv|declin;"
          "approv|deni;grant|deni;allow|forbid;allow|prohibit;allow|block;lock|unlock;"
          "arriv|left;arriv|depart;broken|working;broken|fine;damaged|intact;"
          "paid|unpaid;credit|debit;increas|decreas;raise|lower;"
          "more|less;more|fewer;most|least;before|after;earlier|later;early|late;"
          "first|last;start|end;begin|end;start|finish;include|exclud;full|empty;"
          "success|fail;valid|invalid;correct|incorrect;correct|wrong;"
          "possible|impossible;free|paid;cheap|expensive;high|low;increase|reduce;"
          "win|lose;buy|sell;deliver|return;keep|return;keep|discard;"
          "keep|throw;sign in|sign out;log in|log out;online|offline;on time|late;"
          "in time|late;same|different;new|used;new|old;hot|cold;"
          "larger|smaller;bigger|smaller;large|small;big|small;long|short;"
          "always|never;everyone|no one;everything|nothing;"
          "upgrade|downgrade;subscribe|unsubscribe;import|export;increase|cut;"
          "lost|found;safe|unsafe;safe|dangerous;secure|insecure;public|private;"
          "legal|illegal;agree|disagree;love|hate;happy|unhappy;"
          "pleased|disappointed;better|worse;best|worst;easy|difficult;"
          "easy|hard;fast|slow;quick|slow;above|below;inside|outside;"
          "morning|evening;"
          "today|tomorrow;today|yesterday;tomorrow|yesterday;weekday|weekend;"
          "approve|cancel;shipped|returned",
    "es": "funciona|roto,rota,estropead,averiad;baj|subi,aument;roto,rota,dañad,estropead,defectuos|tarde,retrasad|perdid,extraviad|robad;en stock|agotado;disponible|agotado;disponible|no disponible;cancel|confirm;"
          "cancel|reserv;activ|suspend;activ|desactiv;abiert|cerrad;abrir|cerrar;"
          "acept|rechaz;aprob|rechaz;aprob|deneg;bloque|desbloque;lleg|sali;"
          "roto|funciona;roto|bien;dañad|intact;reembols|cobr;pagad|pendiente;"
          "añad|elimin;aument|reduc;aument|disminu;más|menos;antes|después;temprano|tarde;"
          "primer|último;empez|termin;inici|termin;inclu|exclu;llen|vací;éxito|fallo;"
          "válid|inválid;correct|incorrect;posible|imposible;gratis|pag;"
          "compr|vend;entreg|devol;guard|devol;nuev|usad;nuev|viej;"
          "grande|pequeñ;siempre|nunca;"
          "mejor|peor;fácil|difícil;rápid|lent;hoy|ayer;"
          "mañana|ayer;perdid|encontrad;segur|insegur;públic|privad;de acuerdo|en desacuerdo;"
          "contento|decepcionad;enviad|devuelt",
    "pt": "quebrad,danificad|atrasad|perdid,extraviad|roubad;em estoque|esgotado;disponível|indisponível;cancel|confirm;ativ|suspens;"
          "abert|fechad;aceit|rejeit;aprov|rejeit;cheg|saiu;quebrad|funciona;"
          "reembols|cobr;mais|menos;antes|depois;cedo|tarde;primeir|últim;"
          "válid|inválid;correct|incorrect;sempre|nunca;melhor|pior;"
          "hoje|amanhã;hoje|ontem;amanhã|ontem;grande|pequen;compr|vend;envi|receb",
    "it": "rott,danneggiat|in ritardo|pers,smarrit|rubat;primo|ultimo;disponibil|esaurit;disponibil|non disponibil;annull|conferm;attiv|sospes;"
          "apert|chius;accett|rifiut;approv|rifiut;arriv|partit;rott|funziona;"
          "rimbors|addebit;più|meno;prima|dopo;presto|tardi;"
          "valid|non valid;corrett|sbagliat;sempre|mai;meglio|peggio;"
          "oggi|domani;oggi|ieri;domani|ieri;grande|piccol;compr|vend;invi|ricev",
    "fr": "baiss,diminu|augment,hauss,monté;cassé,endommag,abîm,défectueu|en retard,retardé|perdu|volé;payé|impayé;en stock|en rupture;disponible|indisponible;disponible|épuisé;annul|confirm;"
          "annul|réserv;activ|suspend;activ|désactiv;ouvert|fermé;ouvr|ferm;"
          "accept|refus;approuv|refus;accord|refus;bloqu|débloqu;arriv|parti;"
          "cassé|fonctionne;cassé|intact;endommag|intact;rembours|débit;rembours|factur;"
          "ajout|supprim;augment|diminu;augment|rédui;avant|après;"
          "tôt|tard;en avance|en retard;premier|dernier;première|dernière;commenc|termin;"
          "début|fin;inclu|exclu;plein|vide;réussi|échoué;valide|invalide;"
          "correct|incorrect;possible|impossible;gratuit|payant;"
          "haut|bas;achet|vend;livr|retourn;garder|renvoy;"
          "nouveau|ancien;grand|petit;toujours|jamais;"
          "meilleur|pire;facile|difficile;"
          "rapide|lent;aujourd'hui|demain;aujourd'hui|hier;demain|hier;perdu|trouvé;"
          "public|privé;d'accord|pas d'accord;content|déçu;matin|soir",
    "de": "lieferbar,vorrätig,auf lager,verfügbar|ausverkauft,vergriffen;kaputt,beschädigt,defekt|verspätet,zu spät|verloren|gestohlen;beginn|ende;auf lager|ausverkauft;verfügbar|nicht verfügbar;verfügbar|ausverkauft;"
          "storni|bestätig;kündig|verlänger;aktiv|gesperrt;aktiv|inaktiv;aktivier|deaktivier;"
          "offen|geschlossen;öffn|schließ;akzeptier|abgelehnt;annehm|ablehn;angenommen|abgelehnt;"
          "genehmig|abgelehnt;genehmig|verweiger;sperr|entsperr;angekommen|abgefahren;"
          "kaputt|funktioniert;beschädigt|unbeschädigt;beschädigt|intakt;erstatt|belast;"
          "erstatt|berechn;bezahlt|unbezahlt;hinzu|entfern;erhöh|senk;erhöh|reduzier;"
          "mehr|weniger;vorher|nachher;früh|spät;"
          "anfang|ende;inklusive|exklusive;voll|leer;erfolgreich|fehlgeschlagen;"
          "gültig|ungültig;richtig|falsch;korrekt|falsch;möglich|unmöglich;"
          "kostenlos|kostenpflichtig;billig|teuer;hoch|niedrig;kauf|verkauf;"
          "behalt|zurückschick;neu|gebraucht;"
          "groß|klein;lang|kurz;immer|nie;alles|nichts;"
          "besser|schlechter;einfach|schwierig;schnell|langsam;"
          "heute|gestern;morgen|gestern;verloren|gefunden;"
          "sicher|unsicher;öffentlich|privat;zufrieden|enttäuscht;vormittag|nachmittag",
    "nl": "op voorraad|uitverkocht;beschikbaar|niet beschikbaar;annuleer|bevestig;"
          "actief|geblokkeerd;open|gesloten;geaccepteerd|afgewezen;kapot|werkt;"
          "meer|minder;altijd|nooit;alles|niets;beter|slechter",
    "ru": "в наличии|нет в наличии;отмен|подтвер;активн|заблокирован;открыт|закрыт;"
          "принят|отклонен;сломан|работает;возврат|списан;больше|меньше;до|после;"
          "рано|поздно;всегда|никогда;лучше|хуже;сегодня|завтра;сегодня|вчера",
    "zh": "有货,有库存,现货|卖完,售完,售罄,缺货,没货;解冻|冻结;坏了,损坏,破损,摔坏,坏的|迟到,延迟,晚到,晚了,延误|丢失,丢了,不见了|被偷;有货|缺货;有库存|缺货;现货|缺货;有货|售罄;取消|确认;"
          "取消|预订;激活|暂停;激活|停用;有效|无效;启用|禁用;开启|关闭;打开|关闭;营业|关门;"
          "接受|拒绝;同意|拒绝;批准|拒绝;锁定|解锁;到达|离开;到了|走了;"
          "坏了|正常;损坏|完好;破损|完好;退款|扣款;退款|收费;已付|未付;增加|减少;"
          "提高|降低;之前|之后;以前|以后;提前|延迟;提前|推迟;第一|最后;"
          "开始|结束;成功|失败;正确|错误;"
          "免费|收费;购买|出售;发货|退货;"
          "全新|二手;总是|从不;更好|更差;"
          "容易|困难;今天|明天;今天|昨天;明天|昨天;丢失|找到;安全|危险;"
          "公开|私人;满意|失望;上午|下午;早上|晚上;上周|下周;上个月|下个月",
    "ja": "在庫あり|在庫切れ;在庫あり|品切れ;キャンセル|確認;キャンセル|予約;有効|無効;"
          "開い|閉ま;営業|休業;承認|拒否;受け付け|拒否;到着|出発;壊れ|正常;返金|請求;"
          "多い|少ない;早い|遅い;早く|遅く;最初|最後;開始|終了;成功|失敗;"
          "正しい|間違;無料|有料;安い|高い;新品|中古;大き|小さ;長い|短い;"
          "いつも|決して;良い|悪い;簡単|難しい;今日|明日;今日|昨日;"
          "明日|昨日;午前|午後",
}.items()}
NUMBER_WORDS["zh"]["两"] = 2
NUMBER_WORDS["zh"]["兩"] = 2
