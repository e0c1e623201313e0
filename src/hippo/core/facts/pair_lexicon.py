"""Word lists of the offline pair classifier (:mod:`hippo.core.facts.pairs`): stop words, negations, hedges,
numbers, people, abbreviations, closed classes, change markers and relation groups, in the languages users write
in (English, German, Spanish, French; Chinese, Japanese and Thai where they matter).
"""

from __future__ import annotations

import re

from hippo.core.facts import offline as off

FOREIGN_STOP = frozenset("""nutzer nutzerin nutzers benutzer der die das den dem des ein eine einen einem ist sind hat
    haben bei in im am um auf zu mit von für und oder nicht jetzt sehr gern usuario usuaria el la los las un una es en
    de del al a y que se ha muy ahora l'utilisateur l'utilisatrice utilisateur le les une est à au aux du et chez été
    maintenant très usually typically generally normally basically actually""".split())
NON_LATIN_SUBJECTS = ("用户", "ユーザー", "ผู้ใช้")
NEGATIONS = frozenset("not no never without nothing none nobody nicht kein keine keinen nie nunca jamais pas plus "
                       "ni".split())
HEDGES = frozenset("""want wants wanted plan plans planned planning hope hopes hoping consider considering might maybe
    may would could should will soon someday intends intend thinking""".split())
NUMBER_WORDS = {**off.NUMBERS, **dict(w.split("=") for w in """thirteen=13 fifteen=15 twenty=20 thirty=30 forty=40
    fifty=50 sixty=60 hundred=100 pair=2 twice=2 dozen=12 zwei=2 drei=3 vier=4 fünf=5 dos=2 tres=3 cuatro=4 cinco=5
    deux=2 trois=3 quatre=4 cinq=5 third=3 fourth=4 fifth=5 sixth=6 seventh=7 eighth=8 ninth=9
    tenth=10""".split())}
HAN_DIGITS = {ch: str(i) for i, ch in enumerate("〇一二三四五六七八九十")} | {"两": "2"}
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
NUMBER = re.compile(r"(?<![A-Za-z0-9.])\d+(?:[.,:]\d+)*(?:\s*[kK]\b|(?:st|nd|rd|th)\b)?")
# Human relations: a fact about "User's wife" is not a fact about User.
PEOPLE = frozenset(off.word_stem(off.light_form(w)) for w in """wife husband partner girlfriend boyfriend fiance
    fiancee son
    daughter kid child children baby mother father parent brother sister sibling friend manager colleague coworker
    roommate grandmother grandfather uncle aunt cousin niece nephew neighbour neighbor landlord landlady flatmate
    housemate classmate teammate mentor""".split())
SPOUSES = frozenset(off.word_stem(off.light_form(w)) for w in ("wife", "husband", "partner", "spouse"))
PERSON_SYNONYMS = {"boss": "manager", "kid": "child", "children": "child", "dad": "father", "mom": "mother"}
ABBREVIATIONS = {k: v.replace("_", " ") for k, v in (w.split("=") for w in """k8s=kubernetes phd=doctorate msc=master
    mba=master bsc=bachelor js=javascript ts=typescript gcp=google_cloud nvim=neovim postgres=postgresql barça=barcelona
    uk=united_kingdom us=united_states usa=united_states nyc=new_york_city sf=san_francisco la=los_angeles""".split())}
# A nationality says the country: "User is Irish" / "User is from Ireland" name one place.
DEMONYMS = dict(w.split("=") for w in """irish=ireland scottish=scotland welsh=wales british=britain american=america
    canadian=canada mexican=mexico mexicano=méxico mexicana=méxico brazilian=brazil argentinian=argentina
    chilean=chile indian=india australian=australia swiss=switzerland austrian=austria belgian=belgium""".split())
# Closed classes: two facts that differ by two members of one class ("brothers" / "sisters", "Monday" / "Friday",
# "cat" / "dog") state two facts or a change, never the same fact.
CLASSES = tuple(frozenset(c.split()) for c in """
brother brothers sister sisters son sons daughter daughters mother mom father dad wife husband uncle aunt cousin niece
    nephew grandmother grandfather friend boyfriend girlfriend bruder schwester sohn tochter hermano hermana hijo hija
    frère sœur fils fille
monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays saturdays
    sundays montag dienstag mittwoch donnerstag freitag samstag sonntag lunes martes miércoles jueves viernes sábado
    domingo lundi mardi mercredi jeudi vendredi samedi dimanche
january february march april may june july august september october november december
cat cats dog dogs kitten puppy rabbit hamster goldfish snake bird parrot katze hund gato perro chat chien
morning evening afternoon night mornings evenings afternoons nights
english german french spanish italian portuguese japanese chinese korean russian dutch arabic inglés francés alemán
    anglais allemand espagnol englisch französisch spanisch
red blue green yellow black white purple orange pink grey gray brown
first second third fourth fifth sixth seventh eighth ninth tenth
birthday anniversary geburtstag hochzeitstag jahrestag cumpleaños aniversario anniversaire
older younger elder oldest youngest|early late earlier later|long short longer shorter|junior senior
basic fluent beginner intermediate advanced native|staging production|spring summer autumn fall winter
breakfast lunch dinner|coffee tea water beer wine juice|bike bicycle car train bus motorcycle scooter
football soccer basketball tennis volleyball baseball golf hockey swimming running cycling hiking climbing sport
    skiing surfing yoga boxing rowing
always usually often sometimes occasionally rarely seldom daily weekly monthly yearly annually|day week month year
    weekend fortnight|open closed|half full part|hot cold warm|indoor outdoor indoors outdoors|online offline
public private|left right|north south east west|more less fewer|before after|single married divorced widowed engaged
cheap expensive|fast slow|big small large tiny|upstairs downstairs|film films novel novels podcast podcasts album albums
guitar piano violin drums cello bass flute saxophone trumpet gitarre klavier geige guitarra violín guitare violon
fußball basketball fútbol baloncesto tenis golf""".replace("\n    ", " ").replace("|", "\n").strip().splitlines())
# The same classes in scripts without spaces, matched anywhere in the text.
CJK_CLASSES = tuple(frozenset(c.split()) for c in (
    "妈妈 爸爸 母亲 父亲 儿子 女儿 哥哥 姐姐 弟弟 妹妹 丈夫 妻子 母 父 息子 娘 兄 姉 弟 妹 夫 妻 ลูกสาว ลูกชาย แม่ พ่อ",
    "猫 狗 犬 แมว สุนัข หมา", "英语 日语 法语 德语 中文 汉语 英語 日本語 フランス語 ドイツ語 中国語",
    "紅茶 緑茶 咖啡 茶 コーヒー กาแฟ ชา", "月曜 火曜 水曜 木曜 金曜 土曜 日曜 星期一 星期二 星期三 星期四 星期五"))
# "Now", "moved", "no longer" in the other languages users write in (English: offline.CHANGE), and English
# events that end a state: "has a beard" / "shaved off their beard", "is pregnant" / "gave birth".
CHANGE_WORDS = re.compile(
    r"(?<!\w)(?:shaved|stolen|gave birth|died|retired|got rid of|recovered|healed|dyed|crashed|totall?ed|"
    r"jetzt|nun|inzwischen|umgezogen|verschoben|verlegt|gewechselt|nicht mehr|neue[rnms]?|aufgehört|"
    r"geändert|ahora|se mudó|mudó|cambió|cambiado|ya no|nuev[oa]s?|dejó|volvió|se pasó|subió|bajó|maintenant|"
    r"désormais|déménagé|déplacée?|changé|rejoint|nouve(?:au|lle)|arrêté|passée? à|plus de)(?!\w)|"
    r"现在|搬到|改成|改为|换了|不再|了$|今は|引っ越|変更|変わ|やめ|転職|になった|ตอนนี้|ย้าย|เปลี่ยน|เลิก|แล้ว",
    re.IGNORECASE)
SAME_MEMBER = {"dad": "father", "mom": "mother", "mum": "mother", "bicycle": "bike", "soccer": "football",
                "fall": "autumn", "kitten": "cat", "puppy": "dog", "elder": "older", "grey": "gray",
                "movie": "film", "movies": "films"}
CURRENCY = {"€": " eur ", "$": " usd ", "£": " gbp ", "dollars": "usd", "euros": "eur"}
# Words of one relation or attitude ("lives" / "resides" restate; "lives" / "works" are two facts). Latin entries
# match word starts ("=": whole words), others (Chinese, Japanese, Thai) match anywhere.
GROUPS: dict[str, tuple[str, ...]] = {line.split(":")[0]: tuple(line.split(":")[1].split()) for line in """
live: live living reside residing based home dwell wohn lebt vive habite vit= 住 居住 在住 อาศัย พัก
work: work employ job arbeit angestellt trabaj emplead travail 工作 働 ทำงาน
born: born birth geboren nació né= 出生 生まれ
study: stud learn school lern estudi étudi apprend aprend 学 習 เรียน
teach: teach lehr unterricht enseñ enseign 教え 教師 สอน
host: host organi dirig leitet= leite= gründ
customer: account= accounts= subscri policy= member membre miembro mitglied customer client patient 账户 会员 口座 บัญชี
volunteer: volunt
own: own= owns= owned= owner
rent: rent leas borrow
attend: attend participat listen
visit: visit travel trip went= been=
like: like enjoy fond fan= love ador favo prefer rather= mag= gern gust aime 喜欢 爱 好き ชอบ
dislike: dislik hate detest loath stand= odia horreur hass 嫌
read: read liest lee= leer
write: writ wrote schreib escrib écri
buy: buy bought purchas kauf compr achet
sell: sell sold verkauf vend
speak: speak spoke fluent sprich habla parl
play: play spiel jueg jou
watch: watch mira regard
feed: feed fed=
donate: donat spend spent
invest: invest anleg invier
avoid: avoid abstain verzicht evit évit
veg: vegetarian vegan végétarien vegetarier vegetarisch 素食 ベジタリアン""".strip().splitlines()}
MEAT = re.compile(r"\b(?:meat|fleisch|carne|viande)\b|肉", re.IGNORECASE)
# One way to state an occupation: "works as a nurse", "User's job title is nurse", "es enfermera de profesión".
ROLE_PHRASES = [(re.compile(rx, re.IGNORECASE), repl) for rx, repl in (
    (r"\bworks as\b", "is"), (r"^User['’]s (?:job title|job|profession|occupation|role) is\b", "User is"),
    (r"\btrabaja como\b", "es"), (r"\barbeitet als\b", "ist"), (r"\btravaille comme\b", "est"),
    (r"\s+(?:de profesión|von Beruf|de profession|de métier)\b", ""),
    (r"\b(?:mother tongue|first language)\b", "native language"),
    # "takes a pottery class" is studying it, "runs a book club" is hosting it (teach / study, host / member).
    (r"\b(?:takes|took|is taking)(?=\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+)?(?:class|course|lessons?|workshop)\b)",
     "studies"),
    (r"\b(?:runs|ran|is running)(?=\s+(?:an?|the|their|his|her)\s+(?:[\w-]+\s+)?(?:club|group|team|meetup|business|"
     r"company|shop|store|bakery|caf[eé]|restaurant|blog|podcast|channel|workshop|class|course|choir|band)\b)",
     "organizes"),
    (r"\b(?:da|dan|dio) (?=clases\b)", "enseña "), (r"\b(?:toma|tomó) (?=clases\b)", "estudia "),
    (r"\b(?:gibt|gab)(?=\s+(?:einen|eine|ein)\s+\w*(?:kurs|unterricht|stunde)\b)", "unterrichtet"),
    (r"\b(?:besucht|macht)(?=\s+(?:einen|eine|ein)\s+\w*(?:kurs|unterricht|stunde)\b)", "lernt in"),
    (r"\b(?:donne|donnait) (?=des cours\b)", "enseigne "), (r"\b(?:suit|suivait) (?=des cours\b)", "étudie "))]
