"""check_translation: every check, in every script family, both ways — a wrong answer is
flagged with a sentence naming the value, and a right one (in another format) is not."""

from __future__ import annotations

import pytest

from hymt_chat.text.checks import Finding, check_translation

# (kind, source language, source, target, a right answer, a wrong answer, the value named)
CASES = [
    # --- amounts -------------------------------------------------------------------------
    ("amount", "zh", "退款金额为 259 元", "en", "The refund amount is 259 yuan.",
     "The refund amount is $259.", "259 元"),
    ("amount", "zh", "退款金额为 259 元", "fr", "Le montant du remboursement est de 259 yuans.",
     "Le montant du remboursement est de 259 euros.", "259 元"),
    ("amount", "zh", "退款金额为 259 元", "ja", "返金額は259元です。", "返金額は259円です。",
     "259 元"),
    ("amount", "en", "The total is €1,234.50.", "de", "Die Summe beträgt 1.234,50 €.",
     "Die Summe beträgt 1.234,50 $.", "€1,234.50"),
    ("amount", "ru", "Сумма 1 500 ₽.", "en", "The amount is RUB 1,500.",
     "The amount is $1,500.", "1 500 ₽"),
    ("amount", "ar", "المبلغ ٢٥٩ ريال سعودي", "en", "The amount is 259 SAR.",
     "The amount is 259 euros.", "٢٥٩ ريال سعودي"),
    ("amount", "hi", "राशि ₹259 है", "en", "The amount is ₹259.", "The amount is $259.", "₹259"),
    ("amount", "th", "ยอดเงิน 259 บาท", "en", "The amount is 259 baht.",
     "The amount is 259 dollars.", "259 บาท"),
    ("amount", "bo", "གོང་ཚད་ ¥259", "zh", "价格 259 元", "价格 259 美元", "¥259"),
    # --- dates ---------------------------------------------------------------------------
    ("date", "en", "It will be delivered on 12 March.", "ja", "3月12日に配達されます。",
     "12月3日に配達されます。", "12 March"),
    ("date", "en", "It will be delivered on 12 March.", "ko", "3월 12일에 배송됩니다.",
     "12월 3일에 배송됩니다.", "12 March"),
    ("date", "de", "Lieferung am 12. März.", "es", "Entrega el 12 de marzo.",
     "Entrega el 3 de diciembre.", "12. März"),
    ("date", "ru", "Доставка 12 марта.", "en", "Delivery on March 12.",
     "Delivery on December 3.", "12 марта"),
    ("date", "ar", "التسليم في ١٢ مارس", "en", "Delivery on 12 March.",
     "Delivery on 12 May.", "١٢ مارس"),
    ("date", "hi", "डिलीवरी 12 मार्च को होगी", "en", "Delivery will be on March 12.",
     "Delivery will be on March 21.", "12 मार्च"),
    ("date", "th", "จัดส่งวันที่ 12 มีนาคม", "en", "Delivered on 12 March.",
     "Delivered on 12 April.", "12 มีนาคม"),
    ("date", "bo", "ཟླ་བ་གསུམ་པའི་ཚེས་12", "zh", "3月12日", "12月3日",
     "ཟླ་བ་གསུམ་པའི་ཚེས་12"),
    # --- times ---------------------------------------------------------------------------
    ("time", "en", "between 9:00 and 11:00", "ja", "9:00から11:00の間", "19:00から11:00の間",
     "9:00"),
    ("time", "zh", "下午3点到", "en", "arrives at 3 PM", "arrives at 3 AM", "下午3点"),
    ("time", "ko", "오후 3시에 도착", "en", "arrives at 3:00 PM", "arrives at 8:00 PM",
     "오후 3시"),
    ("time", "ru", "Курьер приедет в 9:00.", "en", "The courier comes at 9:00.",
     "The courier comes at 19:00.", "9:00"),
    ("time", "ar", "الساعة ٩:٠٠ م", "en", "at 9:00 PM", "at 9:00 AM", "٩:٠٠ م"),
    ("time", "hi", "सुबह 9:00 बजे", "en", "at 9:00 AM", "at 9:00 PM", "सुबह 9:00"),
    ("time", "th", "เวลา 09:00 น.", "en", "at 9:00", "at 10:00", "09:00"),
    ("time", "bo", "ཕྱི་དྲོ་ 3:00", "zh", "下午3:00", "上午3:00", "ཕྱི་དྲོ་ 3:00"),
    # --- weekdays ------------------------------------------------------------------------
    ("weekday", "de", "Das Paket kommt am Freitag.", "es", "El paquete llega el viernes.",
     "El paquete llega el jueves.", "Freitag"),
    ("weekday", "zh", "星期五送达", "en", "Delivered on Friday", "Delivered on Thursday",
     "星期五"),
    ("weekday", "ja", "金曜日に届きます", "ko", "금요일에 도착합니다", "목요일에 도착합니다",
     "金曜日"),
    ("weekday", "ru", "Доставим в пятницу.", "en", "We deliver on Friday.",
     "We deliver on Saturday.", "пятницу"),
    ("weekday", "ar", "التسليم يوم الجمعة", "en", "Delivery on Friday", "Delivery on Monday",
     "الجمعة"),
    ("weekday", "hi", "शुक्रवार को डिलीवरी", "en", "Delivery on Friday", "Delivery on Sunday",
     "शुक्रवार"),
    ("weekday", "th", "ส่งวันศุกร์", "en", "Delivered on Friday", "Delivered on Tuesday",
     "วันศุกร์"),
    ("weekday", "bo", "གཟའ་པ་སངས་", "zh", "星期五", "星期四", "གཟའ་པ་སངས་"),
    # --- durations -----------------------------------------------------------------------
    ("duration", "zh", "3 个工作日内到账", "ja", "3営業日以内に入金されます",
     "3週間以内に入金されます", "3 个工作日"),
    ("duration", "en", "within 3 business days", "de", "innerhalb von 3 Werktagen",
     "innerhalb von 3 Wochen", "3 business days"),
    ("duration", "ru", "через 3 рабочих дня", "en", "in 3 business days", "in 3 weeks",
     "3 рабочих дня"),
    ("duration", "ar", "خلال 3 أيام", "en", "within 3 days", "within 3 weeks", "3 أيام"),
    ("duration", "hi", "3 दिन में", "en", "in 3 days", "in 3 months", "3 दिन"),
    ("duration", "th", "ภายใน 3 วัน", "en", "within 3 days", "within 3 hours", "3 วัน"),
    ("duration", "ko", "3일 이내", "zh", "3天内", "3周内", "3일"),
    ("duration", "bo", "ཉིན་ཞག་ 3 ནང་", "zh", "3天内", "3个月内", "ཉིན་ཞག་ 3"),
    ("duration", "en", "ships in 2 days", "ar", "يشحن في 2 أيام", "يشحن في 2 أسابيع", "2 days"),
    # --- percentages ---------------------------------------------------------------------
    ("percent", "en", "a 15% discount", "fr", "une remise de 15 %", "une remise de 50 %",
     "15%"),
    ("percent", "zh", "打折百分之15", "en", "a 15 percent discount", "a 25 percent discount",
     "百分之15"),
    ("percent", "ru", "скидка 15%", "en", "a 15% discount", "a 5% discount", "15%"),
    ("percent", "ar", "خصم ١٥٪", "en", "a 15% discount", "a 51% discount", "١٥٪"),
    ("percent", "hi", "15 प्रतिशत छूट", "en", "15% off", "50% off", "15 प्रतिशत"),
    ("percent", "th", "ส่วนลด 15%", "en", "15% off", "16% off", "15%"),
    ("percent", "bo", "15%", "zh", "15%", "51%", "15%"),
    # --- numbers -------------------------------------------------------------------------
    ("number", "en", "You have 25 items in the cart.", "de",
     "Sie haben 25 Artikel im Warenkorb.", "Sie haben Artikel im Warenkorb.", "25"),
    ("number", "zh", "共有 25 件商品", "en", "There are 25 items", "There are items", "25"),
    ("number", "ru", "В корзине 25 товаров.", "en", "25 items in the cart.",
     "Items in the cart.", "25"),
    ("number", "ar", "لديك ٢٥ منتجًا", "en", "You have 25 products", "You have products",
     "٢٥"),
    ("number", "hi", "आपके पास 25 आइटम हैं", "en", "You have 25 items", "You have items",
     "25"),
    ("number", "th", "มีสินค้า 25 ชิ้น", "en", "There are 25 pieces", "There are pieces",
     "25"),
    ("number", "bo", "༢༥", "zh", "25", "52", "༢༥"),
]


@pytest.mark.parametrize(("kind", "source_lang", "source", "target", "right", "wrong",
                          "value"), CASES, ids=[f"{c[0]}-{c[1]}-{c[3]}" for c in CASES])
def test_a_changed_value_is_flagged_and_a_right_one_is_not(kind, source_lang, source, target,
                                                           right, wrong, value):
    assert [f for f in check_translation(source, right, source_lang, target)
            if f.kind == kind] == []
    flagged = [f for f in check_translation(source, wrong, source_lang, target) if f.kind == kind]
    assert len(flagged) == 1, flagged
    assert value in flagged[0].message and flagged[0].original == value


def test_the_sentence_names_the_value_and_what_the_translation_says():
    (finding,) = check_translation("退款金额为 259 元", "The refund amount is $259.", "zh", "en")
    assert finding == Finding("amount", "The amount 259 元 may be wrong in this translation "
                              "(it says $259).", "259 元", "$259")


def test_a_dropped_currency_is_flagged_and_a_dropped_value_too():
    (no_currency,) = check_translation("退款金额为 259 元", "The refund is 259.", "zh", "en")
    assert no_currency.kind == "amount" and "currency is missing" in no_currency.message
    (gone,) = check_translation("Lieferung am 12. März.", "Lieferung bald.", "de", "en")[:1]
    assert gone.kind == "date" and "is missing" in gone.message


# --- false alarms: the same value in the target's own format is never flagged ---------------


@pytest.mark.parametrize(("source_lang", "source", "target", "answer"), [
    ("de", "Der Betrag ist 1.234,50 €.", "en", "The amount is €1,234.50."),
    ("en", "The amount is €1,234.50.", "fr", "Le montant est de 1 234,50 €."),
    ("en", "The amount is $1,234.", "de", "Der Betrag ist 1.234 $."),
    ("en", "It costs $259.", "zh", "价格为259美元。"),
    ("en", "It costs $259.", "ja", "価格は259ドルです。"),
    ("zh", "价格为 259 元", "en", "The price is CN¥259."),
    ("zh", "价格为 259 元", "en", "The price is 259 RMB."),
    ("en", "Delivered on 12 March at 9:00 PM.", "ja", "3月12日午後9時に配達されました。"),
    ("en", "Delivered on 12 March at 9:00 PM.", "de", "Geliefert am 12. März um 21:00 Uhr."),
    ("en", "Delivered on 12/03/2026.", "fr", "Livré le 12/03/2026."),
    ("en", "Delivered on 2026-03-12.", "ru", "Доставлено 12 марта 2026 года."),
    ("en", "Friday at 9:00", "ru", "в пятницу в 9:00"),
    ("en", "Friday at 9:00", "ar", "الجمعة الساعة ٩:٠٠"),
    ("en", "Friday at 9:00", "hi", "शुक्रवार को 9:00 बजे"),
    ("en", "Friday at 9:00", "th", "วันศุกร์ เวลา 09:00 น."),
    ("en", "Friday at 9:00", "bo", "གཟའ་པ་སངས་ 9:00"),
    ("en", "within 3 business days", "zh", "3个工作日内"),
    ("en", "a 15% discount", "tr", "%15 indirim"),
    ("en", "a 15% discount", "ar", "خصم ١٥٪"),
    ("en", "You ordered 3 items.", "fr", "Vous avez commandé trois articles."),
])
def test_a_right_answer_in_another_format_is_not_flagged(source_lang, source, target, answer):
    assert check_translation(source, answer, source_lang, target) == ()


# --- spans -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "source", "right", "wrong"), [
    ("order", "您的订单号是JD123456789", "Your order number is JD123456789",
     "Your order number is JD12345678"),
    ("email", "请发邮件到 help@example.com", "Please write to help@example.com",
     "Please write to ayuda@example.com"),
    ("url", "Перейдите на https://shop.example.com/track", "Go to https://shop.example.com/track",
     "Go to the tracking page"),
    ("placeholder", "Hola {name}, tu pedido", "Hello {name}, your order",
     "Hello {nombre}, your order"),
])
def test_protected_spans_must_be_there_verbatim(kind, source, right, wrong):
    assert [f for f in check_translation(source, right, None, "en") if f.kind == kind] == []
    (finding,) = [f for f in check_translation(source, wrong, None, "en") if f.kind == kind]
    assert "is missing from this translation" in finding.message


def test_our_own_placeholders_are_left_to_whoever_masked_them():
    assert check_translation("Su pedido [1] llegó.", "Your order arrived.", "es", "en") == ()


# --- language, leftovers, lines, glosses ------------------------------------------------------


@pytest.mark.parametrize(("source_lang", "source", "target", "wrong", "named"), [
    ("en", "Your parcel will arrive tomorrow morning.", "fr",
     "Your parcel will arrive tomorrow morning.", "English"),
    ("en", "Your parcel will arrive tomorrow morning.", "ru", "您的包裹将于明天早上到达。",
     "Chinese"),
    ("zh", "您的包裹将于明天早上到达。", "en", "Ваша посылка прибудет завтра утром.", "Russian"),
    ("en", "Your parcel will arrive tomorrow morning.", "ar",
     "आपका पार्सल कल सुबह पहुंच जाएगा।", "Hindi"),
    ("en", "Your parcel will arrive tomorrow morning.", "bo", "พัสดุของคุณจะมาถึงพรุ่งนี้เช้า",
     "Thai"),
])
def test_an_answer_in_another_language_is_flagged(source_lang, source, target, wrong, named):
    (finding,) = [f for f in check_translation(source, wrong, source_lang, target)
                  if f.kind == "language"]
    assert named in finding.message


def test_chinese_variants_and_malay_indonesian_are_not_other_languages():
    assert check_translation("Your parcel arrives tomorrow.", "您的包裹明天到達。", "en",
                             "zh-Hant") == ()


@pytest.mark.parametrize(("source_lang", "source", "target", "wrong", "left"), [
    ("zh", "预计3天内到账", "en", "it will be到账 in 3 days", "到账"),
    ("ja", "明日お届けします", "en", "We will お届け tomorrow", "お届け"),
    ("ko", "내일 배송됩니다", "en", "It will be 배송 tomorrow", "배송"),
    ("ru", "Посылка придёт завтра", "en", "The parcel придёт tomorrow", "придёт"),
    ("ar", "سيصل الطرد غدا", "en", "The parcel سيصل tomorrow", "سيصل"),
    ("hi", "पार्सल कल पहुंचेगा", "en", "The parcel पहुंचेगा tomorrow", "पहुंचेगा"),
    ("th", "พัสดุจะมาถึงพรุ่งนี้", "en", "The parcel จะมาถึง tomorrow", "จะมาถึง"),
    ("bo", "སང་ཉིན་ཡོང་གི་རེད།", "zh", "明天ཡོང་", "ཡོང"),
])
def test_a_run_of_the_source_script_left_in_the_answer_is_flagged(source_lang, source, target,
                                                                    wrong, left):
    (finding,) = [f for f in check_translation(source, wrong, source_lang, target)
                  if f.kind == "leftover"]
    assert left in finding.message


def test_no_leftover_where_the_target_writes_the_same_script():
    assert [f for f in check_translation("明日お届けします", "明天送到", "ja", "zh")
            if f.kind == "leftover"] == []
    assert [f for f in check_translation("Посылка придёт завтра", "Посилка прийде завтра",
                                         "ru", "uk") if f.kind == "leftover"] == []


def test_a_latin_month_or_weekday_name_left_in_a_cjk_answer_is_a_leftover():
    (finding,) = [f for f in check_translation("The refund was sent on Friday.",
                                               "返金はFridayに送られました。", "en", "ja")
                  if f.kind == "leftover"]
    assert "Friday" in finding.message


def test_latin_names_in_a_translation_are_not_leftovers():
    assert check_translation("Your iPhone from Apple ships today.", "您的 Apple iPhone 今天发货。",
                             "en", "zh") == ()


def test_merged_lines_are_flagged():
    (finding,) = check_translation("Hallo\nIhr Paket kommt morgen.",
                                   "Hello, your parcel arrives tomorrow.", "de", "en")
    assert finding.kind == "lines" and "2 lines" in finding.message
    assert check_translation("Hallo\nIhr Paket kommt morgen.",
                             "Hello\nYour parcel arrives tomorrow.", "de", "en") == ()


@pytest.mark.parametrize(("source_lang", "source", "target", "wrong"), [
    ("zh", "请耐心等待", "en", "Please wait patiently (a polite phrase in Chinese)"),
    ("en", "Please wait", "zh", "请稍等（礼貌用语）"),
])
def test_an_added_parenthetical_explanation_is_flagged(source_lang, source, target, wrong):
    (finding,) = check_translation(source, wrong, source_lang, target)
    assert finding.kind == "gloss" and "explanation" in finding.message


def test_a_parenthesis_the_source_had_is_not_a_gloss():
    assert check_translation("Pay by card (Visa only).", "Payez par carte (Visa uniquement).",
                             "en", "fr") == ()


@pytest.mark.parametrize(("source_lang", "source", "target", "answer", "left"), [
    ("en", "Your order arrives on Thursday, 7 November.", "fr",
     "Votre commande arrive le 7 novembre à Thursday.", "Thursday"),
    ("de", "Das Paket kommt am Freitag.", "es", "El paquete llega el Freitag.", "Freitag"),
    ("en", "You get a discount until 31 December.", "zh", "折扣直到31 december。", "december"),
])
def test_a_source_weekday_or_month_name_left_untranslated_is_a_leftover(
        source_lang, source, target, answer, left):
    (finding,) = [f for f in check_translation(source, answer, source_lang, target)
                  if f.kind == "leftover"]
    assert left in finding.message


def test_a_name_both_languages_write_alike_is_no_leftover():
    assert check_translation("Il arrive en mars.", "Llega en marzo.", "fr", "es") == ()
    assert [f for f in check_translation("Kommt im August.", "Arrives in August.", "de", "en")
            if f.kind == "leftover"] == []


def test_a_time_that_contradicts_its_day_period_is_flagged():
    (finding,) = check_translation("The courier comes at 14:30.", "快递员上午14:30到。", "en",
                                   "zh")
    assert finding.kind == "time" and "14:30" in finding.message


@pytest.mark.parametrize(("source_lang", "source", "target", "answer", "added"), [
    ("zh", "本次优惠 15%，有效期至 6月30日。", "en",
     "This promotion offers a 15% discount for 6 months from June 30th.", "6 months"),
    ("en", "Your order will arrive on Thursday, 7 November.", "fr",
     "Votre commande arrivera le jeudi 7 novembre, le 7 juillet.", "7 juillet"),
    ("en", "Delivered on 12 March between 9:00 and 11:00.", "ja",
     "3月12日（火曜日）9:00から11:00の間に配達されます。", "火曜日"),
    ("en", "The store closes at 20:00.", "de", "Der Laden ist von 20:00 bis 21:00 Uhr offen.",
     "21:00"),
])
def test_a_value_the_answer_invents_is_flagged(source_lang, source, target, answer, added):
    (finding,) = [f for f in check_translation(source, answer, source_lang, target)
                  if f.kind != "gloss"]  # "（火曜日）" is an added parenthetical as well
    assert finding.found == added and "adds the" in finding.message


def test_noon_written_without_a_day_period_is_not_midnight():
    (finding,) = check_translation("Livraison entre 9 h et 12 h.",
                                   "Delivery between 9 AM and 12 AM.", "fr", "en")
    assert finding.kind == "time" and "12 h" in finding.message
    assert check_translation("Livraison entre 9 h et 12 h.", "Delivery between 9 AM and 12 PM.",
                             "fr", "en") == ()


def test_chinese_left_in_a_korean_answer_is_flagged():
    # What the demo model answered in tests/test_e2e_checks.py: the date in Korean, the rest not.
    kinds = {f.kind for f in check_translation("包裹将于 12月3日 送达", "包裹将于 12월 3日送达",
                                                "zh", "ko")}
    assert {"language", "leftover"} <= kinds
